"""Benchmarks: numbers to compare run to run (prints them; asserts nothing).

    .venv/bin/python benchmarks/bench.py [--pages ../shared/ptx-isa-9.0] [--repeat 5] [--out FILE.json]

1. cold whole-process ``ptx-verify check``: on the mma/mma.sp catalog (the 107 layouts the speed issue
   was measured on), on the whole bundled catalog (one process, and the default worker processes), and
   on doc pages: CPU and wall, median of ``--repeat`` fresh processes, and the start-up floor (``ptx-verify --version``);
2. per phase, in process, cold caches: load, each engine of the fragment checks, each instruction
   check family, the number of distinct maps proved;
3. scaling: one synthetic layout (a wgmma-accumulator-like map) at growing sizes up to 10^6 points:
   the enumeration engine (vectorised evaluation + verdicts) and the Z3 engine, time and peak memory,
   each as a ratio to a numpy floor (a hand-written numpy evaluation of the same map) measured in the
   same run;
4. families: the wgmma D family proved for every N at once, as a ratio to one N;
5. time limits: the whole catalog under small ``--timeout`` values: the longest check against its limit,
   and how many checks ended ``unknown`` (never reported as proved);
6. with ``--suite``: the README's test command (``pytest -q -n auto -m "not slow"``) and the integration tests
   (``-m slow``), once each: wall seconds and the CPU of every worker;
7. growth: ``check --jobs 1`` of the bundled spec files in two halves and whole (cold processes): whether the
   whole costs more than its halves beyond the relations between them.

CPU seconds are process CPU (this machine is shared; wall time is printed too).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verify import api  # noqa: E402
from verify.checks.fragment import clear_caches  # noqa: E402


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def whole_process(args: list[str], repeat: int) -> dict[str, float]:
    """Median CPU and wall seconds of ``repeat`` fresh processes."""
    cpus, walls = [], []
    for _ in range(repeat):
        c0, t0 = _child_cpu(), time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        cpus.append(_child_cpu() - c0)
    return {"cpu_s": round(statistics.median(cpus), 3), "wall_s": round(statistics.median(walls), 3)}


def phases() -> dict[str, object]:
    """In-process phases with cold caches."""
    from verify.checks import instruction as ins_mod
    from verify.checks import sparse as sparse_mod
    clear_caches()
    out: dict[str, object] = {}
    c0 = time.process_time()
    specs = api.load(["specs"])
    out["load_s"] = round(time.process_time() - c0, 3)
    timers: dict[str, float] = {}

    def timed(name: str, fn):
        def run(*a, **k):
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                timers[name] = timers.get(name, 0.0) + time.process_time() - t
        return run

    from verify.checks import run as run_mod
    patches = [(ins_mod, "check_shapes"), (ins_mod, "check_k"), (ins_mod, "check_lane_groups"),
               (ins_mod, "sparse_checks"), (run_mod, "check_relations")]
    saved = [(m, n, getattr(m, n)) for m, n in patches]
    for m, n in patches:
        setattr(m, n, timed(n, getattr(m, n)))
    try:
        c0 = time.process_time()
        report = api.check_all(specs, jobs=1)
        total = time.process_time() - c0
    finally:
        for m, n, f in saved:
            setattr(m, n, f)
    del sparse_mod
    fresh = [r for r in report.results if not r.engine_cached]
    z3_s = sum(c.seconds or 0.0 for r in fresh for c in r.checks if "z3" in c.engines)
    enum_s = sum(r.enumeration_seconds for r in fresh)
    out.update({"check_all_s": round(total, 3), "layouts": len(report.results), "distinct_maps": len(fresh),
                "instructions": len(report.instructions), "fragment_z3_s": round(z3_s, 3),
                "fragment_enumeration_s": round(enum_s, 3),
                **{(k if k == "check_relations" else f"instruction_{k}") + "_s": round(v, 3)
                   for k, v in sorted(timers.items())}})
    return out


# ----------------------------------------------------------------------------- scaling

FORMULA = """warp = %laneid >> 5
g = (%laneid % 32) >> 2
q = %laneid % 4
row = (16 * warp) + g for ci where (i % 4) < 2
      (16 * warp) + g + 8 Otherwise
col = (8 * (i >> 2)) + (q * 2) + (i & 0x1)"""


def numpy_floor(threads: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The same map, written by hand in numpy (the floor the engine is compared with)."""
    t = np.arange(threads)[:, None]
    i = np.arange(n)[None, :]
    base = 16 * (t >> 5) + ((t % 32) >> 2)
    row = np.where((i % 4) < 2, base, base + 8)
    col = 8 * (i >> 2) + (t % 4) * 2 + (i & 1)
    return np.broadcast_to(row, (threads, n)), np.broadcast_to(col, (threads, n))


def _best(fn, k: int = 3) -> float:
    best = float("inf")
    for _ in range(k):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _peak(fn) -> int:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def scaling() -> list[dict[str, object]]:
    from verify.checks import maps
    from verify.engines import smt
    from verify.layout.enumerate import decide
    rows_out = []
    for threads, n in ((128, 8), (128, 128), (1024, 16), (1024, 128), (1024, 1024)):
        points = threads * n
        lay = api.layout_from_formula(FORMULA, operand="C", rows=16 * threads // 32, cols=2 * n, elements=n,
                                      threads=threads, types=("f32",), registers=n, register_type="f32")
        floor_s = _best(lambda: numpy_floor(threads, n))

        def enumerate_all() -> None:
            c = lay.map.grid(lay.domain)
            decide(c, lay.rows, lay.cols, lay.groups, lay.element_name)

        def evaluate_only() -> None:
            lay.map.grid(lay.domain)

        eval_s = _best(evaluate_only)
        enum_s = _best(enumerate_all)
        mem = _peak(enumerate_all)
        t = time.perf_counter()
        b = smt.Budget(60.0)  # the decider's Z3 side alone: in_range and injective in one query, then counting
        joint = maps._joint_unsat(lay.map, b, anywhere=True)
        sur = maps._by_counting(lay.map, b, frozenset({"in_range", "injective"}) if joint else frozenset())
        p = {"in_range": "unsat" if joint else "open", "injective": "unsat" if joint else "open"}
        z3_s = time.perf_counter() - t
        rows_out.append({"points": points, "threads": threads, "elements": n, "numpy_floor_s": round(floor_s, 5),
                         "evaluation_s": round(eval_s, 5), "evaluation_vs_floor": round(eval_s / floor_s, 2),
                         "enumeration_s": round(enum_s, 5), "enumeration_vs_floor": round(enum_s / floor_s, 2),
                         "enumeration_peak_mb": round(mem / 2**20, 1), "z3_s": round(z3_s, 4),
                         "z3_vs_floor": round(z3_s / floor_s, 1),
                         "z3": f"{p['in_range']}/{p['injective']}/{sur} (counting)"})
    return rows_out


def families() -> dict[str, object]:
    """The wgmma D family, every N at once, against one N (the largest): the Z3 proofs alone (one query
    per property with N free, against the same queries for one N), and the whole check with both
    engines (the enumeration engine checks every value of N, so it grows with their number)."""
    from verify.checks import family, maps
    from verify.engines import smt
    fam = next((lay for lay in api.layouts(api.load(["specs"])) if lay.is_family and lay.operand in ("C", "D")), None)
    if fam is None:
        path = ROOT / "benchmarks" / "data"
        fam = next(lay for lay in api.layouts(api.load([path])) if lay.is_family)
    inst = fam.instance(**{fam.domain.params[0].name: max(fam.domain.params[0].values)})

    def z3_proofs(lay) -> None:  # the decider's Z3 side alone (checks.maps): one joint query, then counting
        b = smt.Budget(60.0)
        assert maps._joint_unsat(lay.map, b, anywhere=True)
        assert maps._by_counting(lay.map, b, frozenset({"in_range", "injective"})) == "unsat"

    def z3_family() -> None:
        z3_proofs(fam)

    def z3_one() -> None:
        z3_proofs(inst)

    def cold(fn) -> float:
        best = float("inf")
        for _ in range(5):
            clear_caches()
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        return best

    z3_family_s, z3_one_s = cold(z3_family), cold(z3_one)
    family_s, one_s = cold(lambda: family.check_any(fam)), cold(lambda: family.check_any(inst))
    r = family.check_any(fam)
    return {"family": fam.id, "values": len(fam.domain.params[0].values),
            "z3_family_s": round(z3_family_s, 4), "z3_one_instance_s": round(z3_one_s, 4),
            "z3_ratio": round(z3_family_s / z3_one_s, 2),
            "family_s": round(family_s, 4), "one_instance_s": round(one_s, 4), "ratio": round(family_s / one_s, 2),
            "verdicts": {c.check: c.status for c in r.checks}}


def time_limits() -> list[dict[str, object]]:
    """The whole catalog under small time limits: does any check run past its limit?"""
    specs = api.load(["specs"])
    out = []
    for limit in (0.05, 0.1, 0.5, 2.0):
        clear_caches()
        r = api.check_all(specs, timeout=limit, jobs=1)
        checks = [c for lr in r.results for c in lr.checks] + [c for ins in r.instructions for c in ins.checks]
        longest = max(checks, key=lambda c: c.seconds or 0.0)
        out.append({"timeout_s": limit, "longest_check_s": round(longest.seconds or 0.0, 4),
                    "longest_vs_timeout": round((longest.seconds or 0.0) / limit, 2), "longest": longest.check,
                    "unknown": sum(c.status == "unknown" for c in checks), "checks": len(checks)})
    return out


def growth(repeat: int, floor_cpu: float) -> list[dict[str, object]]:
    """``check --jobs 1`` of the bundled spec files in two halves (every other file, so each half holds every
    kind) and whole, each a cold process, the start-up floor taken off.  The whole costs its halves plus the
    relations between instructions of different halves (which neither half has): per layout it is no slower
    as the catalog grows when ``whole - halves`` is about the relations' time (``phases``)."""
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "specs").glob("*.toml"))
    out = []
    for name, part in (("first half", files[0::2]), ("second half", files[1::2]), ("whole", files)):
        specs = api.load(part)
        n = len(api.layouts(specs)) + len(api.map_layouts(specs))
        t = whole_process(["-m", "verify", "check", *part, "--jobs", "1"], repeat)
        out.append({"part": name, "files": len(part), "layouts": n, "cpu_s": t["cpu_s"],
                    "work_s": round(t["cpu_s"] - floor_cpu, 3),
                    "ms_per_layout": round(1000 * (t["cpu_s"] - floor_cpu) / n, 2)})
    return out


def mma_catalog() -> list[str]:
    """The spec files of the mma/mma.sp catalog (without block scaling, added later)."""
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "specs").glob("mma.*.toml") if "block_scale" not in p.name)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", default=None, help="PTX ISA pages to time `check PAGES` too")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None, help="also write the numbers as JSON here")
    ap.add_argument("--suite", action="store_true", help="also time the README's test command and the integration "
                    "tests (minutes)")
    ap.add_argument("--only-suite", action="store_true", help="time the test tiers only")
    args = ap.parse_args()
    if args.only_suite:
        tiers = suite()
        _print_suite(tiers)
        if args.out:
            Path(args.out).write_text(json.dumps({"suite": tiers}, indent=2) + "\n", encoding="utf-8")
        return 0
    result: dict[str, object] = {"machine": {"python": platform.python_version(), "platform": platform.platform(),
                                             "cpus": os.cpu_count(), "processor": platform.processor()}}
    # the command line's start-up (its imports, with the environment it sets for itself): what every check pays
    result["import_only"] = whole_process(["-m", "verify", "--version"], args.repeat)
    result["check_mma_catalog"] = whole_process(["-m", "verify", "check", *mma_catalog(), "--jobs", "1"], args.repeat)
    result["check_specs"] = whole_process(["-m", "verify", "check", "--jobs", "1"], args.repeat)
    result["check_specs_default_jobs"] = whole_process(["-m", "verify", "check"], args.repeat)
    if args.pages:
        result["check_pages"] = whole_process(["-m", "verify", "check", args.pages, "--jobs", "1"], args.repeat)
    result["growth"] = growth(args.repeat, result["import_only"]["cpu_s"])
    result["phases"] = phases()
    result["scaling"] = scaling()
    result["families"] = families()
    result["time_limits"] = time_limits()
    print(f"machine: {result['machine']}")
    for k in ("import_only", "check_mma_catalog", "check_specs", "check_specs_default_jobs", "check_pages"):
        if k in result:
            print(f"{k:24s} cold process: {result[k]['cpu_s']:.3f} s CPU, {result[k]['wall_s']:.3f} s wall"
                  f" (median of {args.repeat})")
    print("the catalog in halves and whole (check --jobs 1, cold processes; work = CPU less the start-up floor):")
    for g in result["growth"]:  # type: ignore[union-attr]
        print(f"  {g['part']:12s} {g['files']:>3} spec files, {g['layouts']:>3} layouts: {g['cpu_s']:.3f} s CPU, "
              f"work {g['work_s']} s, {g['ms_per_layout']} ms per layout")
    halves = sum(g["work_s"] for g in result["growth"][:2])  # type: ignore[index,misc]
    print(f"  whole - halves = {result['growth'][2]['work_s'] - halves:.3f} s: the relations across the halves "  # type: ignore[index]
          f"(check_relations_s below)")
    print("phases (in process, cold caches, CPU s):")
    for k, v in result["phases"].items():  # type: ignore[union-attr]
        print(f"  {k:32s} {v}")
    print("scaling (seconds; ratios to the numpy floor measured in this run):")
    print(f"  {'points':>8} {'floor':>9} {'eval':>9} {'x':>5} {'enum':>9} {'x':>5} {'MB':>7} {'z3':>8} verdicts")
    for r in result["scaling"]:  # type: ignore[union-attr]
        print(f"  {r['points']:>8} {r['numpy_floor_s']:>9.5f} {r['evaluation_s']:>9.5f} {r['evaluation_vs_floor']:>5}"
              f" {r['enumeration_s']:>9.5f} {r['enumeration_vs_floor']:>5} {r['enumeration_peak_mb']:>7}"
              f" {r['z3_s']:>8.4f} {r['z3']}")
    f = result["families"]
    print(f"family {f['family']}: Z3 proofs for all {f['values']} values at once {f['z3_family_s']} s, "  # type: ignore[index]
          f"for one value {f['z3_one_instance_s']} s: ratio {f['z3_ratio']}; whole check with both engines "  # type: ignore[index]
          f"(enumeration: every value) {f['family_s']} s against {f['one_instance_s']} s: ratio {f['ratio']}")  # type: ignore[index]
    for t in result["time_limits"]:  # type: ignore[union-attr]
        print(f"--timeout {t['timeout_s']}: longest check {t['longest_check_s']} s ({t['longest']}, "
              f"{t['longest_vs_timeout']}x the limit), {t['unknown']} of {t['checks']} checks unknown")
    if args.suite:
        result["suite"] = suite()
        _print_suite(result["suite"])  # type: ignore[arg-type]
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


TIERS = {"readme_test_command": ["-m", "not slow"], "integration_tests": ["-m", "slow"]}


def suite() -> dict[str, dict[str, object]]:
    """The two test tiers, once each: wall seconds, CPU seconds of pytest and its workers, the summary line."""
    out: dict[str, dict[str, object]] = {}
    for name, mark in TIERS.items():
        c0, t0 = _child_cpu(), time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "auto", "-p", "no:cacheprovider", *mark],
                           cwd=ROOT, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - t0, _child_cpu() - c0
        last = (r.stdout.strip().splitlines() or [""])[-1]
        out[name] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "exit": r.returncode, "summary": last}
    return out


def _print_suite(tiers: dict[str, dict[str, object]]) -> None:
    for name, t in tiers.items():
        print(f"{name:24s} {t['wall_s']} s wall, {t['cpu_s']} s CPU (pytest and its workers), exit {t['exit']}: "
              f"{t['summary']}")


if __name__ == "__main__":
    sys.exit(main())
