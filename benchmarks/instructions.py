"""Instructions a whole ``ptx-verify check --jobs 1`` executes, counted by callgrind (prints numbers; asserts nothing).

CPU seconds on this shared 2-core machine drift by 10-25% from day to day, more than most changes save, so a
before and an after timed on different days say little.  The number of instructions a process executes is the
same for the same program, input and environment, whatever else the machine is doing: this counts them, split by
where they ran (Z3, the Python interpreter, numpy, the C library, ...), for this tree and, with ``--vs DIR``, for
another checkout run the same way (its ratio to this one printed).

    .venv/bin/python benchmarks/instructions.py [SPEC_OR_PAGE ...] [--vs DIR] [--json]

With no paths the bundled specs are checked, under ``--timeout 600``: callgrind runs a program about 50 times
slower, so the default 10 s per check would let the wall-clock safety net end slow queries, sending checks down
their fallback paths (a joint query is asked again property by property), and the count would depend on how busy
the machine is.  Solver units grow with the timeout too, but no check of the catalog needs more than the
default's (none is ``unknown`` even at ``--timeout 0.5``), so each check takes the path it takes in a normal run.  ``--vs DIR`` is another source tree (e.g. ``git worktree add
/tmp/base BASE``), run with this environment's Python.  Each tree's package is compiled first, so that no run
counts compiling it.  Needs valgrind (Debian: ``apt-get install valgrind``); a run takes about 60 times as
long as the command itself, 2-4 minutes for the whole catalog.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = "600"  # seconds per check under callgrind (see above)

# Where an instruction ran, by the shared object callgrind names (the first pattern that matches)
# (site-packages and lib-dynload paths contain "python3" too: the interpreter's own patterns come last)
PLACES = (("z3", "libz3"), ("numpy", "numpy"), ("ctypes/ffi", "_ctypes"), ("ctypes/ffi", "libffi"),
          ("hashing", "libcrypto"), ("hashing", "_hashlib"), ("C library", "libc.so"), ("C library", "libm.so"),
          ("C library", "ld-linux"), ("python", "libpython"), ("python", "python3"))


def _place(obj: str) -> str:
    return next((name for name, needle in PLACES if needle in obj), "other")


def _split(out_file: str) -> dict[str, int]:
    """Self instructions by place, from ``callgrind_annotate`` (every function, no threshold)."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", out_file],
                          capture_output=True, text=True, check=True).stdout
    by: collections.Counter[str] = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(.*\[(.*)\]\s*$", line)
        if m:
            by[_place(m.group(2))] += int(m.group(1).replace(",", ""))
    return dict(by.most_common())


def count(tree: Path, paths: list[str]) -> dict[str, object]:
    """Instructions of ``python -m verify check --jobs 1 PATHS`` run in ``tree``, and its summary line."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "verify")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        out_file = os.path.join(tmp, "callgrind.out")
        env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", sys.executable,
                              "-m", "verify", "check", "--jobs", "1", "--timeout", TIMEOUT, *paths],
                             cwd=tree, env=env, capture_output=True, text=True)
        total = re.search(r"Collected : (\d+)", run.stderr)
        if total is None:
            raise SystemExit(f"instructions: callgrind counted nothing in {tree}: {run.stderr.strip()[-300:]}")
        # the summary line, or the command's own one-line error (valgrind's lines start with ==pid==)
        lines = run.stdout.strip().splitlines() or [x for x in run.stderr.splitlines() if x and not x.startswith("==")]
        return {"tree": str(tree), "exit": run.returncode, "summary": lines[-1] if lines else "",
                "instructions": int(total.group(1)), "by_place": _split(out_file)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="spec files, directories or doc pages (default: the bundled specs)")
    ap.add_argument("--vs", type=Path, default=None, help="another source tree to count the same way")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = ap.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("instructions: valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    paths = [str(Path(p).resolve()) for p in args.paths]
    rows = [count(ROOT, paths)] + ([count(args.vs.resolve(), paths)] if args.vs else [])
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        print(f"{r['tree']}: {r['instructions'] / 1e9:.3f} G instructions (exit {r['exit']}: {r['summary']})")
        for place, n in r["by_place"].items():  # type: ignore[attr-defined]
            print(f"  {place:12s} {n / 1e9:7.3f} G")
    if len(rows) == 2:
        print(f"this tree / {rows[1]['tree']}: {rows[0]['instructions'] / rows[1]['instructions']:.3f}")  # type: ignore
    return 0


if __name__ == "__main__":
    sys.exit(main())
