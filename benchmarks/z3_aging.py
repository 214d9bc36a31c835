"""How Z3's per-query cost grows with the terms its context has held (prints numbers; asserts nothing).

Every encoder builds its terms in Z3's one global context.  This times five injectivity queries on one
shared-memory map (``wgmma.shared.K.128B@corrected``) fresh, with ``--terms`` unrelated terms alive, after they
are released, and (``--references``) after evaluating every installed reference in this same process
(``references(jobs=1)``: what ``crosscheck --matrix`` avoids by giving each reference a worker process).

    .venv/bin/python benchmarks/z3_aging.py [--terms 300000] [--references]
"""
from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from pathlib import Path

import z3

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from verify import api  # noqa: E402
from verify.checks import maps  # noqa: E402

MAP = "wgmma.shared.K.128B@corrected"


def five_queries(m) -> tuple[float, float]:
    """CPU and system seconds of five injectivity checks of ``m``."""
    gc.collect()
    t, r0 = time.process_time(), resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(5):
        maps.injective(m)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return time.process_time() - t, r1.ru_stime - r0.ru_stime


def report(what: str, m) -> None:
    cpu, sys_s = five_queries(m)
    print(f"{what:40s} {cpu:7.3f} s CPU ({sys_s:.3f} s system), Z3 holds "
          f"{z3.Z3_get_estimated_alloc_size() / 2**20:.0f} MiB")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--terms", type=int, default=300_000)
    ap.add_argument("--references", action="store_true", help="also: after every installed reference")
    args = ap.parse_args()
    specs = api.load(str(ROOT / "specs"))
    m = api.layout(specs, MAP).map
    report("fresh", m)
    x = z3.BitVec("x", 32)
    alive = [x + k * 7 + z3.BitVec(f"y{k}", 32) for k in range(args.terms)]
    report(f"{args.terms} terms alive", m)
    del alive
    report("after they are released", m)
    if args.references:
        api.references(specs, jobs=1)
        report("after every reference, in this process", m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
