"""The Z3 floor of a whole-catalog ``check``: the solver time its queries need, whatever Python does around them
(prints numbers; asserts nothing).

Records every query ``check --jobs 1`` of the bundled specs asks (``verify.engines.smt.solve``), with its time
in the run and its verdict, then replays each from its SMT-LIB text in a fresh solver under several
strategies: the solver of the QF_BV tactic the engine uses, ``SolverFor("QF_BV")`` (which runs that tactic too),
Z3's default solver, and two bit-blasting tactic pipelines.
What no strategy gets under is CPU that any whole-catalog ``check`` with both engines spends on Z3 alone.

    .venv/bin/python benchmarks/z3_floor.py
"""
from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

import z3

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from verify.checks import run  # noqa: E402
from verify.engines import smt  # noqa: E402
from verify import api  # noqa: E402


def record() -> list[tuple[float, str, str]]:
    """(CPU seconds in the run, verdict, SMT-LIB text) of every query of the whole-catalog check."""
    queries: list[tuple[float, str, str]] = []
    solve = smt.solve

    def timed(constraints, budget):
        t = time.process_time()
        res = solve(constraints, budget)
        dt = time.process_time() - t
        s = z3.Solver()
        s.add(*constraints)
        queries.append((dt, res[0], s.to_smt2()))
        return res

    smt.solve = timed
    try:
        run.check_all(api.load([str(ROOT / "specs")]), jobs=1)
    finally:
        smt.solve = solve
    return queries


STRATEGIES = {
    "qfbv tactic's solver (the engine's)": lambda: z3.Tactic("qfbv").solver(),
    "QF_BV solver (SolverFor)": lambda: z3.SolverFor("QF_BV"),
    "default solver": lambda: z3.Solver(),
    "simplify, solve-eqs, bit-blast, sat": lambda: z3.Then("simplify", "propagate-values", "solve-eqs", "bit-blast",
                                                          "sat").solver(),
    "... with elim-uncnstr": lambda: z3.Then("simplify", "propagate-values", "solve-eqs", "elim-uncnstr", "simplify",
                                             "bit-blast", "sat").solver(),
}


def main() -> int:
    queries = record()
    verdicts = collections.Counter(r for _, r, _ in queries)
    print(f"{len(queries)} queries ({dict(sorted(verdicts.items()))}), {sum(q[0] for q in queries):.3f} s CPU in "
          f"the run (solver, model and statistics calls included)")
    for name, make in STRATEGIES.items():
        total, differ = 0.0, 0
        for _, verdict, text in queries:
            s = make()
            s.from_string(text)
            t = time.process_time()
            r = s.check()
            total += time.process_time() - t
            differ += str(r) != verdict
        print(f"  replayed, {name:38s} {total:.3f} s CPU" + (f" ({differ} verdicts differ)" if differ else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
