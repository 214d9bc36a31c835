"""What the README's test command covers of ``verify/``, with and without the rest of the catalog's
cross-products (``tests/tiers.py``): the lines and branches each run executes, and any that only the rest
reaches (there should be none: then the split dropped no coverage, only repetitions).

    .venv/bin/python benchmarks/tier_coverage.py [--jobs N]

Needs coverage.py and pytest-cov in the environment (``pip install coverage pytest-cov``; measurement
tools, not dependencies of the project).  Runs the suite twice under coverage (about 3 minutes each on 2
cores), prints the two totals and every line or branch the first run misses, exit 1 if there is one.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = (("README's command", "not slow"), ("README's command with the rest", "not slow or kind_rest"))


def _covered(expr: str, jobs: str, out: Path) -> dict[str, tuple[set[int], set[tuple[int, int]]]]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", jobs, "-m", expr, "-p", "no:cacheprovider",
           "--cov=verify", "--cov-branch", f"--cov-report=json:{out}"]
    env = {**os.environ, "COVERAGE_FILE": str(out.with_suffix(".data"))}  # nothing written into the checkout
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    tail = done.stdout.strip().splitlines()[-1:] or [""]
    if done.returncode != 0:
        raise SystemExit(f"tier_coverage: the suite failed ({expr}): {tail[0]}")
    print(f"  -m {expr!r}: {tail[0]}")
    files = json.loads(out.read_text(encoding="utf-8"))["files"]
    return {name: (set(f["executed_lines"]), {tuple(b) for b in f["executed_branches"]}) for name, f in files.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="auto", help="pytest-xdist workers (default auto)")
    args = ap.parse_args()
    try:
        import pytest_cov  # noqa: F401
    except ImportError:
        print("tier_coverage: needs coverage.py and pytest-cov (pip install coverage pytest-cov)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        runs = [_covered(expr, args.jobs, Path(tmp) / f"{k}.json") for k, (_, expr) in enumerate(RUNS)]
    for (what, _), cov in zip(RUNS, runs):
        lines = sum(len(v[0]) for v in cov.values())
        branches = sum(len(v[1]) for v in cov.values())
        print(f"{what}: {lines} lines and {branches} branches of verify/ executed")
    fast, full = runs
    lost = 0
    for name in sorted(full):
        lines = sorted(full[name][0] - fast.get(name, (set(), set()))[0])
        branches = sorted(full[name][1] - fast.get(name, (set(), set()))[1])
        if lines or branches:
            lost += len(lines) + len(branches)
            print(f"  only with the rest: {name}: lines {lines[:20]} branches {branches[:20]}")
    print("the rest adds no line and no branch" if not lost else f"the rest adds {lost} lines and branches")
    return 1 if lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
