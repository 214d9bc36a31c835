"""Shared-memory benchmarks: numbers to compare run to run (prints them; asserts nothing).

    .venv/bin/python benchmarks/bench_shared.py [--repeat 5] [--out FILE.json]

1. a bank-conflict proof: ``ldmatrix.x4`` over a 128 x 128 tile of 16-bit elements in CuTe's 128B-swizzled
   K-major layout (1695 placements: every row, every 8 columns; both engines), and the refutation of the
   row-major tile (the witness);
2. a descriptor check: the B tile of ``wgmma.m64n256k16`` (256 x 16, 128B-swizzled M/N-major) against the
   descriptor derived for it (both engines), and the derivation itself;
3. the same through the command line, in fresh processes (start-up included).

In process: median CPU and wall seconds of ``--repeat`` runs, each on a freshly built layout (so no verdict
is reused).  Whole process: median of ``--repeat`` fresh ``ptx-verify`` processes.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import whole_process  # noqa: E402

from verify import api  # noqa: E402
from verify.checks.descriptor import check, derive  # noqa: E402

SW128_128 = "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_128,_128>{})"
MN_B_256 = "tile_to_shape(GMMA::Layout_MN_SW128_Atom<half_t>{}, Shape<_256,_16>{})"


def timed(fn, repeat: int) -> dict[str, object]:  # type: ignore[no-untyped-def]
    cpus, walls, result = [], [], None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        result = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return {"cpu_s": round(statistics.median(cpus), 3), "wall_s": round(statistics.median(walls), 3),
            "max_wall_s": round(max(walls), 3), "result": result}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    n = args.repeat
    out: dict[str, object] = {"machine": platform.machine(), "python": platform.python_version(), "repeat": n}

    def banks_proof() -> str:
        r = api.banks(api.shared_layout("cute", SW128_128), "ldmatrix.x4")
        return f"{r.get('conflict_free').status} ({r.placements} placements, engines {dict(r.get('conflict_free').engines)})"

    def banks_refute() -> str:
        r = api.banks(api.shared_layout("cute", "(128,128):(128,1)", type="f16"), "ldmatrix.x4")
        return f"{r.get('conflict_free').status}, degree {r.degree}"

    lay = api.shared_layout("cute", MN_B_256)
    value = derive(lay, major="MN", rows=256).descriptor.encode()

    def desc_check() -> str:
        r = check(api.shared_layout("cute", MN_B_256), value, major="MN", rows=256)
        return f"{r.status} ({dict(r.check.engines)})"

    def desc_derive() -> str:
        r = derive(api.shared_layout("cute", MN_B_256), rows=256)
        return f"{r.status}: {r.descriptor.describe()}"

    out["banks_128x128_sw128_ldmatrix_x4"] = timed(banks_proof, n)
    out["banks_128x128_rowmajor_ldmatrix_x4"] = timed(banks_refute, n)
    out["descriptor_check_m64n256k16_B"] = timed(desc_check, n)
    out["descriptor_derive_m64n256k16_B"] = timed(desc_derive, n)
    args_banks = ["-m", "verify", "banks", "--cute", SW128_128, "--access", "ldmatrix.x4"]
    args_desc = ["-m", "verify", "descriptor", "--cute", MN_B_256, "--shape", "m64n256k16", "--operand", "B",
                 "--major", "MN", "--check", f"{value:#x}"]
    out["cli_banks"] = whole_process(args_banks, n)
    out["cli_descriptor_check"] = whole_process(args_desc, n)
    out["cli_import_floor"] = whole_process(["-c", "import verify.cli.main"], n)
    for k, v in out.items():
        print(f"{k:40s} {v}")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
