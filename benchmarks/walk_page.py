"""The walk of ``ptx-verify check PAGE`` (issue 22 item 1): what one doc page costs, counted.

Runs the CLI's ``main(["check", PAGE])`` in this process with counters wrapped around the formula parser
and the whole-map evaluations, and prints

* ``modules``: the ``verify.*`` modules imported by the run (a fresh process: none before it);
* ``parses``: calls of the formula tokenizer (every parse of formula text: ``parse_formula``,
  ``parse_lane_expression``, ``parse_expression``), with the split by entry point;
* ``toml_parses``: TOML texts parsed (``catalog.spec.parse_toml``; the bundled specs the page is judged
  against are among them);
* ``evaluations``: whole-map evaluations (a map's ``cells`` over a domain: the enumeration engine's one
  pass over every point; ``evaluate_all`` for named maps), and ``cells_of`` calls (most served by its memo);
* ``cpu_s``: user + system CPU seconds of the whole command in a child process (median of ``--runs``).

No assertions: numbers to compare before and after a change.

    .venv/bin/python benchmarks/walk_page.py [PAGE] [--runs 5] [--json] [--root DIR]

``--root DIR`` measures the source tree at DIR (another checkout, e.g. a worktree of the base commit) with
this environment, so that a before and an after are measured alike.  Compile both trees' bytecode first
(``python -m compileall -q DIR/verify``): with ``PYTHONDONTWRITEBYTECODE`` set, a tree without ``__pycache__``
pays for compiling every module on every run.  For a paired CPU comparison, alternate the two trees' runs
(``--runs``) and compare medians.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT.parent / "shared" / "ptx-isa-9.0" / "9-7-14-5-8-matrix-fragments-for-mma-m16n8k16-with-floating-point-type.md"


def walk(page: str, root: str) -> dict[str, object]:
    """Counts of one in-process ``check PAGE`` (call in a fresh process)."""
    sys.path.insert(0, root)
    before = {m for m in sys.modules if m == "verify" or m.startswith("verify.")}
    import verify.formula.parser as parser
    from verify.layout import fragment_maps, named, sparse
    from verify.catalog import spec as cspec

    parses: collections.Counter[str] = collections.Counter()
    evaluations: collections.Counter[str] = collections.Counter()
    tokenize = parser.tokenize

    def counted_tokenize(text):
        parses[sys._getframe(1).f_code.co_name] += 1
        return tokenize(text)

    parser.tokenize = counted_tokenize

    def wrap(owner, name, label):
        f = getattr(owner, name)

        def counted(*a, **k):
            evaluations[label] += 1
            return f(*a, **k)
        setattr(owner, name, counted)

    wrap(fragment_maps.FormulaFragment, "grid", "FormulaFragment.grid")
    wrap(sparse.SparseMap, "grid", "SparseMap.grid")
    wrap(fragment_maps.PlacedMap, "grid", "PlacedMap.grid")
    wrap(named, "evaluate_all", "evaluate_all")  # (callers inside layout.named reach it by this name)
    toml = collections.Counter()
    parse_toml = cspec.parse_toml

    def counted_parse_toml(path, text):
        toml["parse_toml"] += 1
        return parse_toml(path, text)
    cspec.parse_toml = counted_parse_toml

    from verify.cli.main import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["check", page])
    mods = sorted(m for m in sys.modules if (m == "verify" or m.startswith("verify.")) and m not in before)
    return {"exit": rc, "modules": len(mods), "module_names": mods, "parses": sum(parses.values()),
            "parses_by_entry": dict(sorted(parses.items())), "toml_parses": toml["parse_toml"],
            "evaluations": sum(evaluations.values()), "evaluations_by_kind": dict(sorted(evaluations.items()))}


def _env(root: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PTX_DOCS_DIR"}
    env["PYTHONPATH"] = root
    return env


def cpu(page: str, runs: int, root: str) -> list[float]:
    """User + system seconds of ``ptx-verify check PAGE`` (the CLI's ``main``) in a child process, per run."""
    cmd = [sys.executable, "-c", "import sys; from verify.cli import main; sys.exit(main(sys.argv[1:]))", "check", page]
    out = []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root, check=False,
                       env=_env(root))
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("page", nargs="?", default=str(PAGE))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--root", default=str(ROOT), help="the source tree to measure (default: this checkout)")
    ap.add_argument("--walk-only", action="store_true", help=argparse.SUPPRESS)  # the child of main()
    a = ap.parse_args()
    if a.walk_only:
        print(json.dumps(walk(a.page, a.root)))
        return
    # the walk in a fresh process, so that nothing imported here counts
    page = str(Path(a.page).resolve())
    child = subprocess.run([sys.executable, __file__, page, "--walk-only", "--root", a.root], capture_output=True,
                           text=True, check=True, env=_env(a.root))
    result = json.loads(child.stdout)
    times = cpu(page, a.runs, a.root) if a.runs > 0 else []
    result["cpu_s"] = {"median": round(statistics.median(times), 3), "min": round(min(times), 3),
                       "max": round(max(times), 3), "runs": len(times)} if times else None
    if a.json:
        print(json.dumps(result, indent=2))
        return
    print(f"page: {Path(a.page).name}   exit {result['exit']}   source: {a.root}")
    print(f"verify modules imported: {result['modules']}")
    print(f"formula parses: {result['parses']}  {result['parses_by_entry']}")
    print(f"TOML texts parsed: {result['toml_parses']}")
    print(f"whole-map evaluations: {result['evaluations']}  {result['evaluations_by_kind']}")
    if times:
        c = result["cpu_s"]
        print(f"CPU (user+sys) of the command: median {c['median']} s, min {c['min']}, max {c['max']} "
              f"over {c['runs']} runs")


if __name__ == "__main__":
    main()
