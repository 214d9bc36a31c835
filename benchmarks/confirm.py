"""Benchmark of ``confirm --device simulated``: numbers to compare run to run (prints them; asserts nothing).

    .venv/bin/python benchmarks/confirm.py [--tree PATH] [--ids ID ...] [--no-catalog] [--phases] [--out FILE.json]

1. whole process: ``python -m verify confirm ID --device simulated`` for each ``--ids`` (default: the two
   instructions of hardening item 17, ``mma.m16n8k256.A.b1`` and ``mma.sp.m16n8k128.A.u4_s4``), then for
   the whole bundled catalog (unless ``--no-catalog``): wall and CPU seconds of the child, and its exit code;
2. ``--phases`` (this checkout only): in process, per mma/mma.sp probe of those ids, the seconds of the
   SIMULATED device, of the relation reconstruction (``observe.relations``, the part a GPU run shares) and
   of the comparison with the specs (``explain.compare``); then per probe kind over the whole catalog, the
   seconds of the simulated device and of decoding and judging.

``--tree PATH`` runs part 1 against another checkout of the package (for a before/after comparison, e.g.
``git archive <commit> | tar -x -C /tmp/before``): the child runs with that directory as its working
directory, so ``python -m verify`` imports that tree's ``verify``.  CPU seconds are the child's own (this
machine is shared; wall time is printed too).
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_IDS = ("mma.m16n8k256.A.b1", "mma.sp.m16n8k128.A.u4_s4")


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def whole_process(tree: Path, ids: list[str]) -> dict[str, object]:
    """One fresh ``confirm --device simulated`` process in ``tree``."""
    c0, t0 = _child_cpu(), time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "verify", "confirm", *ids, "--device", "simulated",
                        "--specs", str(tree / "specs")], cwd=tree, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    summary = (r.stdout.strip().splitlines() or [""])[-1]
    return {"ids": ids or ["(catalog)"], "wall_s": round(wall, 2), "cpu_s": round(_child_cpu() - c0, 2),
            "exit": r.returncode, "summary": summary}


def phases(ids: list[str]) -> list[dict[str, object]]:
    """Seconds of the simulated device, the reconstruction and the comparison, per mma/wgmma probe of ``ids``,
    and per kind over the whole catalog (simulate, then decode and judge)."""
    sys.path.insert(0, str(ROOT))
    from verify import api
    from verify.hardware import explain, kinds, observe
    lays = api.layouts(api.load([str(ROOT / "specs")]))
    out: list[dict[str, object]] = []
    for p in kinds.probes_for(lays, ids):
        if p.kind not in ("mma", "wgmma"):
            continue
        ins = p.payload
        t0 = time.perf_counter()
        raw = kinds.simulate(p)
        t1 = time.perf_counter()
        obs = observe.from_raw(raw, simulated=True)
        rel = observe.relations(ins, obs)
        t2 = time.perf_counter()
        explain.compare(ins, obs, rel)
        t3 = time.perf_counter()
        out.append({"instruction": ins.id, "experiments": ins.plan.total, "records": len(raw["records"]),
                    "simulate_s": round(t1 - t0, 3), "relations_s": round(t2 - t1, 3),
                    "compare_s": round(t3 - t2, 3)})
    per_kind: dict[str, list[float]] = {}
    for p in kinds.all_probes(lays)[0]:
        t0 = time.perf_counter()
        raw = kinds.simulate(p)
        t1 = time.perf_counter()
        kinds.judge(p, observe.from_raw(raw, simulated=True))
        t2 = time.perf_counter()
        acc = per_kind.setdefault(p.kind, [0, 0.0, 0.0])
        acc[0] += 1
        acc[1] += t1 - t0
        acc[2] += t2 - t1
    out += [{"kind": k, "probes": int(v[0]), "simulate_s": round(v[1], 2), "decode_and_judge_s": round(v[2], 2)}
            for k, v in sorted(per_kind.items())]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=ROOT, help="checkout whose package runs part 1 (default: this one)")
    ap.add_argument("--ids", nargs="*", default=list(DEFAULT_IDS))
    ap.add_argument("--no-catalog", action="store_true", help="skip the whole-catalog run")
    ap.add_argument("--phases", action="store_true", help="in-process split for this checkout")
    ap.add_argument("--out", type=Path, default=None, help="also write the numbers as JSON")
    args = ap.parse_args()
    tree = args.tree.resolve()
    result: dict[str, object] = {"machine": {"python": platform.python_version(), "cpus": len(__import__("os").sched_getaffinity(0))},
                                 "tree": str(tree), "runs": []}
    runs: list[dict[str, object]] = result["runs"]  # type: ignore[assignment]
    for ident in args.ids:
        runs.append(whole_process(tree, [ident]))
        print(json.dumps(runs[-1]), flush=True)
    if not args.no_catalog:
        runs.append(whole_process(tree, []))
        print(json.dumps(runs[-1]), flush=True)
    if args.phases:
        result["phases"] = phases(args.ids)
        for row in result["phases"]:  # type: ignore[attr-defined]
            print(json.dumps(row), flush=True)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
