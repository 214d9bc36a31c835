"""Benchmark: block tiles conformed by both engines (prints numbers; asserts nothing).

    .venv/bin/python benchmarks/bench_block_tiles.py [--repeat 5]

The issue's two cases, each ``conform`` from a cold cache (``clear_caches``), both engines (Z3 and
enumeration) deciding the structure and the coverage, plus the given's own checks:

1. a 128 x 256 f32 accumulator over 8 warps (Triton TTGIR of an Ampere matmul: 256 threads x 128 elements,
   32K points) against ``mma.m16n8k16.float.C.f32``;
2. three warpgroups over 192 x 256 (CuTe ``TiledMMA`` of SM90 64x128x16 with AtomLayout (3,1,1): 384 threads
   x 128 elements, 48K points) against ``wgmma.m64nNk16.D.f32`` (N = 128).

CPU seconds (process time) and wall, median of ``--repeat`` runs.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verify import api  # noqa: E402
from verify.checks.fragment import clear_caches  # noqa: E402

DATA = ROOT / "tests" / "data"


def case(name: str, spec_id: str, read, params=None) -> None:  # type: ignore[no-untyped-def]
    specs = api.load(str(ROOT / "specs"))
    spec = api.layout(specs, spec_id)
    cpu, wall = [], []
    for _ in range(ARGS.repeat):
        clear_caches()
        c0, w0 = time.process_time(), time.perf_counter()
        given = read(spec)
        res = api.conform(spec, given, params=params)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    print(f"{name}: {given.threads} threads x {given.n_elements} elements = {given.threads * given.n_elements} points, "
          f"{res.status} ({', '.join(f'{k} {v}' for k, v in res.engines.items())}); "
          f"cpu {statistics.median(cpu):.3f} s, wall {statistics.median(wall):.3f} s (median of {ARGS.repeat})")


def main() -> None:
    case("128 x 256 f32 over 8 warps (TTGIR)", "mma.m16n8k16.float.C.f32",
         lambda s: api.triton((DATA / "ttgir" / "ampere_matmul_f16.ttgir").read_text(), s, tensor="#mma"))
    case("3 warpgroups over 192 x 256 (TiledMMA)", "wgmma.m64nNk16.D.f32",
         lambda s: api.tiled_mma((DATA / "cute_tiled" / "sm90_64x128x16_three_warpgroups_192x256.txt").read_text(), s,
                                 params={"N": 128}), {"N": 128})


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    ARGS = p.parse_args()
    main()
