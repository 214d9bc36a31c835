"""Wall time of ``conform``, ``handoff`` and ``crosscheck`` on the cases of docs/layouts.md (prints numbers,
asserts nothing).

    .venv/bin/python examples/time_layout_checks.py [--repeat N] [--cutlass INCLUDE_DIR]

Each line: the case, its verdict, the median and the max of N runs (seconds; the first run of each
case included, since a user's command runs once).  Caches of evaluated layouts are cleared between
runs, so every run pays for enumeration and Z3.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from verify import api
from verify.checks.fragment import clear_caches

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "notations"


def find(layouts, shape, operand, ptype, corrected=False):
    return next(x for x in layouts if x.instruction == "mma" and str(x.shape) == shape and x.operand == operand
                and ptype in x.types and x.corrected == corrected and x.variant is None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cutlass", default=str(DATA / "cutlass-4.2.0"), help="headers for the crosscheck timing")
    args = ap.parse_args()
    lays = api.layouts(api.load(ROOT / "specs"))
    a16, c16 = find(lays, "m16n8k16", "A", "f16"), find(lays, "m16n8k16", "C", "f32")
    b32, a256 = find(lays, "m16n8k32", "B", "s4"), find(lays, "m16n8k256", "A", "b1", corrected=True)
    cases = [
        ("conform cute m16n8k16 A (equal)", lambda: api.conform(a16, api.cute("((4,8),(2,2,2)):((32,1),(16,8,128))", a16))),
        ("conform cute m16n8k16 A swapped (permuted)",
         lambda: api.conform(a16, api.cute("((4,8),(2,2,2)):((32,1),(8,16,128))", a16))),
        ("conform cute PR #3140 before (differs)", lambda: api.conform(b32, api.cute("((4,8),(8)):((32,1),(8))", b32))),
        ("conform cute m16n8k256 b1 A (equal, 128 elements)",
         lambda: api.conform(a256, api.cute("((4,8),(32,2,2)):((512,1),(16,8,2048))", a256))),
        ("conform cute PR #1856 A before (differs, 128 elements)",
         lambda: api.conform(a256, api.cute("(32,(8,4,2,2)):(64,(64,16,8,2048))", a256))),
        ("conform triton acc 16x8 (equal)",
         lambda: api.conform(c16, api.triton((DATA / "triton_mma_v2_acc_16x8.json").read_text(), c16))),
        ("conform triton 4 warps (replicated)", lambda: api.conform(c16, api.triton(
            '{"register": [[0,1],[8,0]], "lane": [[0,2],[0,4],[1,0],[2,0],[4,0]], "warp": [[0,0],[0,0]], '
            '"shape": [16, 8]}', c16))),
        ("conform table m16n8k256 b1 A (equal, 4096 entries)", lambda: api.conform(a256, api.table(
            api_table_text(a256), a256))),
        ("handoff FA2 C.f32 -> A.f16 (free)", lambda: api.handoff(c16, a16)),
        ("handoff int8 C.s32 -> A.s8 (shuffle)",
         lambda: api.handoff(find(lays, "m16n8k32", "C", "s32"), find(lays, "m16n8k32", "A", "s8"))),
        (f"crosscheck {args.cutlass}", lambda: api.crosscheck(args.cutlass, api.load(ROOT / "specs"))),
    ]
    for name, fn in cases:
        times, verdict = [], ""
        for _ in range(args.repeat):
            clear_caches()
            t0 = time.perf_counter()
            res = fn()
            times.append(time.perf_counter() - t0)
            verdict = getattr(res, "status", "") or "{agree} agree, {differ} differ".format(**res.summary())
        print(f"{name:<58} {verdict:<20} median {statistics.median(times):7.3f} s   max {max(times):7.3f} s")


def api_table_text(lay) -> str:
    from verify.outputs import json as out_json
    return out_json.to_json(out_json.table_json(lay, None))


if __name__ == "__main__":
    main()
