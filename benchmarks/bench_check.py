"""Benchmark: time `check` over the bundled catalog (prints numbers; asserts nothing).

    .venv/bin/python benchmarks/bench_check.py [SPECS_DIR] [--pages DOCS_DIR] [--repeat N]

Reports total wall time of load + check, per-layout Z3 time (median, max), enumeration
time, instruction-level time, and (with --pages) the ingest time of the doc pages.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from verify import api


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="?", default="specs")
    ap.add_argument("--pages", default=None, help="directory of PTX ISA pages to time ingestion")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (per-layout times need 1)")
    args = ap.parse_args()

    best = None
    from verify.checks.fragment import clear_caches
    for _ in range(args.repeat):
        clear_caches()
        t0 = time.perf_counter()
        specs = api.load([args.specs])
        t_load = time.perf_counter() - t0
        report = api.check_all(specs, jobs=args.jobs)
        t_total = time.perf_counter() - t0
        if best is None or t_total < best[0]:
            best = (t_total, t_load, report)
    assert best is not None
    t_total, t_load, report = best
    fresh = [r for r in report.results if not r.engine_cached]  # identical layouts are proved once
    z3_times = [sum(c.seconds or 0.0 for c in r.checks if "z3" in c.engines) for r in fresh]
    query_times = [c.seconds or 0.0 for r in fresh for c in r.checks if "z3" in c.engines]
    enum_times = [r.enumeration_seconds for r in fresh]
    layouts_time = sum(z3_times) + sum(enum_times)
    print(f"layouts                 {len(report.results)} ({len(fresh)} distinct maps proved; the rest reuse their verdicts)")
    print(f"instructions            {len(report.instructions)}")
    print(f"total wall (load+check) {t_total:.3f} s   (best of {args.repeat}, jobs={args.jobs})")
    print(f"  load + parse          {t_load:.3f} s")
    print(f"  Z3, all layouts       {sum(z3_times):.3f} s   per layout median {statistics.median(z3_times) * 1000:.1f} ms, max {max(z3_times) * 1000:.1f} ms")
    print(f"  Z3, per query         median {statistics.median(query_times) * 1000:.1f} ms, max {max(query_times) * 1000:.1f} ms ({len(query_times)} queries)")
    print(f"  enumeration           {sum(enum_times):.3f} s   per layout median {statistics.median(enum_times) * 1000:.1f} ms, max {max(enum_times) * 1000:.1f} ms")
    print(f"  instruction checks    {max(0.0, t_total - t_load - layouts_time):.3f} s (remainder)")
    if args.pages:
        from verify.catalog.pages import specs_from_pages
        pages = sorted(str(p) for p in Path(args.pages).glob("9-7-14-[56]-*.md"))
        t0 = time.perf_counter()
        out = specs_from_pages(pages)
        print(f"ingest                  {time.perf_counter() - t0:.3f} s   ({len(pages)} pages -> {len(out)} specs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
