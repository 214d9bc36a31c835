"""``ptx-verify kernel`` figures (prints them; asserts nothing):

    .venv/bin/python benchmarks/bench_kernel.py [--repeat 3] [--ctas 1,2,4,8] [--out FILE.json]

1. the issue's kernel: Triton's 128 x 128 x 64 fp16 tile kernel, 4 warps, 3 stages, over K = 256
   (examples/kernels/triton_fp16.toml), one fresh ``ptx-verify kernel`` process: CPU and wall seconds, the median
   of ``--repeat`` runs, and the process's peak memory (the target: at most 10 s CPU on this 2-core machine);
2. the same in process, by phase: parsing, each engine's execution, the symbolic verdict; and what the symbolic
   engine keeps (the value table, the mma operand tables) against the products it stands for;
3. growth with the CTAs executed: the same kernel on grids of 1, 2, 4, 8 CTAs (M = 128 x CTAs), CPU seconds and
   seconds per CTA, each in a fresh process, and their peak memory;
4. the Hopper and Blackwell kernels (issue 38's targets: at most 10 s CPU each): Triton's 128 x 128 x 64 fp16
   wgmma kernel over K = 256 (triton_sm90.toml), the same through TMA (triton_sm90_tma.toml), the tcgen05 one over
   K = 256 (triton_sm100.toml), the block-scaled mxfp8 one (triton_sm100_mxfp8.toml) and the hand-written sparse
   wgmma.mma_async.sp kernels (wgmma_sparse.toml, wgmma_sparse_s8.toml) and the CTA pair's tcgen05.mma
   (tcgen05_pair.toml) and with A in Tensor Memory (tcgen05_a_tmem.toml), each a fresh process, the median of
   ``--repeat`` runs (``--newer-only`` runs this part alone).

CPU seconds are process CPU (this machine is shared; wall time is printed too).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
KERNELS = ROOT / "examples" / "kernels"

CHILD = """
import resource, sys, time
t0 = time.process_time()
from verify.cli.main import main
rc = main(sys.argv[1:])
sys.stdout.flush()
print("BENCH", time.process_time() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, rc, file=sys.stderr)
"""


def fresh(args: list[str]) -> dict[str, float]:
    """One fresh process of ``ptx-verify ARGS``: CPU (the process's own, start-up included), wall, peak KB."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, *args], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    line = next(ln for ln in p.stderr.splitlines() if ln.startswith("BENCH"))
    _, cpu, rss, rc = line.split()
    return {"cpu_s": float(cpu), "wall_s": wall, "peak_mb": int(rss) / 1024, "exit": int(rc)}


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0]}


def phases() -> dict[str, float]:
    from verify.kernel.check import check_elements
    from verify.kernel.launch import read_launch
    from verify.kernel.load import load
    from verify.kernel.numeric import Numeric
    from verify.kernel.run import execute
    from verify.kernel.symbolic import Symbolic
    out: dict[str, float] = {}
    t = time.process_time()
    launch = read_launch(str(KERNELS / "triton_fp16.toml"))
    module, fn = load(launch)
    out["parse_s"] = time.process_time() - t
    t = time.process_time()
    run = execute(module, fn, launch, Symbolic(launch))
    out["symbolic_run_s"] = time.process_time() - t
    t = time.process_time()
    sym = run.domain
    vals, status, _ = sym.output_values(run.gmem)
    wrong = check_elements(sym, launch, vals, status)
    out["symbolic_verdict_s"] = time.process_time() - t
    t = time.process_time()
    execute(module, fn, launch, Numeric(launch, module))
    out["numeric_run_s"] = time.process_time() - t
    kept = sym.table.n * 6 * 8 + sum(a.n * a.width * 8 + b.n * b.width * 8 for a, b, _, _ in sym.forms)
    M, N = launch.tensors()["C"].shape
    K = launch.tensors()["A"].shape[1]
    out["symbolic_kept_mb"] = kept / 2 ** 20
    out["products_represented"] = M * N * K
    out["as_pairs_of_int64_mb"] = M * N * K * 16 / 2 ** 20
    out["wrong"] = int(wrong.sum())
    out["instructions"] = run.prog.steps_run
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def grid_launch(ctas: int, folder: Path) -> Path:
    text = (KERNELS / "triton_fp16.toml").read_text(encoding="utf-8")
    M = 128 * ctas
    text = text.replace('ptx = "triton_fp16.ptx"', f'ptx = "{KERNELS / "triton_fp16.ptx"}"')
    text = text.replace("grid = [1, 1, 1]", f"grid = [{ctas}, 1, 1]")
    text = text.replace('shape = [128, 256] }', f'shape = [{M}, 256] }}', 1)
    text = text.replace('{ tensor = "C", type = "f32", shape = [128, 128] }', f'{{ tensor = "C", type = "f32", shape = [{M}, 128] }}')
    text = text.replace("128, 128, 256,    # M, N, K", f"{M}, 128, 256,    # M, N, K")
    path = folder / f"grid{ctas}.toml"
    path.write_text(text, encoding="utf-8")
    return path


NEWER = {"wgmma fp16 128x128x64, cp.async, K = 256 (sm_90)": "triton_sm90",
         "wgmma fp16 128x128x64, TMA, K = 256 (sm_90)": "triton_sm90_tma",
         "tcgen05 fp16 128x128x64, K = 256 (sm_100)": "triton_sm100",
         "tcgen05 mxfp8 block-scaled 128x128x128, K = 256 (sm_100)": "triton_sm100_mxfp8",
         "wgmma.sp f16 2:4, 4 CTAs of 64x16x64 (sm_90a, hand-written)": "wgmma_sparse",
         "wgmma.sp s8 2:4, 4 CTAs of 64x16x128 (sm_90a, hand-written)": "wgmma_sparse_s8",
         "tcgen05 cta_group::2 f16 256x64x32, a CTA pair (sm_100a, hand-written)": "tcgen05_pair",
         "tcgen05 f16 128x32x32, A in Tensor Memory (sm_100a, hand-written)": "tcgen05_a_tmem"}


def newer(repeat: int) -> dict[str, dict[str, float]]:
    out = {}
    for label, name in NEWER.items():
        out[label] = median_of([fresh(["kernel", f"examples/kernels/{name}.toml"]) for _ in range(repeat)])
        print(f"4. {label} ({name}.toml): {out[label]} (median of {repeat} fresh processes; exit 0 = proved)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ctas", default="1,2,4,8")
    ap.add_argument("--out", default=None)
    ap.add_argument("--newer-only", action="store_true", help="only part 4 (Hopper and Blackwell)")
    a = ap.parse_args()
    res: dict[str, object] = {}
    if a.newer_only:
        res["newer"] = newer(a.repeat)
        if a.out:
            Path(a.out).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
        return
    runs = [fresh(["kernel", "examples/kernels/triton_fp16.toml"]) for _ in range(a.repeat)]
    res["issue_kernel"] = median_of(runs)
    print(f"1. Triton 128x128x64 fp16, 4 warps, 3 stages, K = 256, one CTA: {res['issue_kernel']} "
          f"(median of {a.repeat} fresh processes; exit 0 = proved)")
    res["phases"] = phases()
    print(f"2. in process: {res['phases']}")
    growth = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in a.ctas.split(",")):
            path = grid_launch(n, Path(tmp))
            r = median_of([fresh(["kernel", str(path)]) for _ in range(a.repeat)])
            growth[n] = {**r, "cpu_per_cta_s": round(r["cpu_s"] / n, 3)}
            print(f"3. {n} CTA(s), M = {128 * n}: {growth[n]}")
    res["growth"] = growth
    res["newer"] = newer(a.repeat)
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
