"""``ptx-verify probe`` and ``ptx-verify confirm``: run the real instructions on a GPU.

``register(subparsers)`` adds both subcommands (called by ``verify.cli``).
Exit codes: 0 every tested layout confirmed, 1 some contradicted, 2 bad input or
no GPU (one line on stderr, nothing written).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from . import observe, probes
from .spec import Layout, SpecError


class _Fail(Exception):
    """Bad input or missing tool: one line, exit 2."""


def _layouts(specs: str) -> list[Layout]:
    from . import api  # noqa: PLC0415
    return api.layouts(api.load([specs]))


def _instructions(lays: list[Layout], ids: Sequence[str]) -> list[probes.Instruction]:
    try:
        return probes.instructions_for(lays, ids) if ids else probes.instructions(lays)
    except KeyError as e:
        raise _Fail(e.args[0]) from None


def find_nvcc() -> str | None:
    """nvcc from PATH, $CUDA_HOME, or the optional PyPI package ``nvidia-cuda-nvcc``."""
    found = shutil.which("nvcc")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "nvcc").is_file():
            return str(Path(home) / "bin" / "nvcc")
    try:
        import nvidia.cuda_nvcc as pkg  # type: ignore[import-not-found]  # noqa: PLC0415
        for base in getattr(pkg, "__path__", []):
            cand = Path(base) / "bin" / "nvcc"
            if cand.is_file():
                return str(cand)
    except ImportError:
        pass
    return None


def find_ptxas(nvcc: str | None = None) -> str | None:
    found = shutil.which("ptxas")
    if found:
        return found
    if nvcc and (Path(nvcc).parent / "ptxas").is_file():
        return str(Path(nvcc).parent / "ptxas")
    return None


def cuda_devices() -> tuple[int, str]:
    """(compute capability of device 0 as 80, 90, ..., why none) via the driver; no GPU -> (0, reason)."""
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        return 0, "no CUDA driver library (libcuda) on this machine"
    if lib.cuInit(0) != 0:
        return 0, "the CUDA driver found no usable GPU (cuInit failed)"
    n = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value == 0:
        return 0, "the CUDA driver reports no GPU"
    dev, major, minor = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
    if (lib.cuDeviceGet(ctypes.byref(dev), 0) != 0
            or lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) != 0
            or lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev) != 0):
        return 0, "the CUDA driver cannot read the GPU's compute capability"
    return major.value * 10 + minor.value, ""


def cmd_probe(args: argparse.Namespace) -> int:
    lays = _layouts(args.specs)
    inss = _instructions(lays, args.ids)
    out = Path(args.emit)
    out.mkdir(parents=True, exist_ok=True)
    for ins in inss:
        (out / f"{ins.id}.cu").write_text(probes.probe_source(ins), encoding="utf-8")
        print(f"{out / (ins.id + '.cu')}  {ins.text}  ({ins.arch})")
    (out / "README.md").write_text(probes.build_note(inss), encoding="utf-8")
    print(f"{out / 'README.md'}  build and run notes")
    return 0


def _run_probe(nvcc: str, ins: probes.Instruction, arch: str, work: Path, timeout: float) -> tuple[dict[str, Any], str]:
    src = probes.probe_source(ins)
    cu = work / f"{ins.id}.cu"
    exe = work / ins.id
    cu.write_text(src, encoding="utf-8")
    b = subprocess.run([nvcc, f"-arch={arch}", "-O2", "-o", str(exe), str(cu)], capture_output=True, text=True,
                       timeout=timeout)
    if b.returncode != 0:
        raise _Fail(f"{ins.id}: nvcc failed: {(b.stderr or b.stdout).strip().splitlines()[-1:]}")
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise _Fail(f"{ins.id}: probe exited {r.returncode}: {r.stderr.strip()[:200]}")
    try:
        return json.loads(r.stdout), probes.source_sha256(src)
    except json.JSONDecodeError as e:
        raise _Fail(f"{ins.id}: probe output is not JSON: {e}") from None


def _nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = [ln for ln in out.splitlines() if "release" in ln]
    return lines[-1].strip() if lines else ""


def cmd_confirm(args: argparse.Namespace) -> int:
    lays = _layouts(args.specs)
    inss = _instructions(lays, args.ids)
    results: list[observe.HardwareResult] = []
    if args.device == "simulated":
        from . import simdevice  # noqa: PLC0415
        print("SIMULATED device (numpy, follows the specs): tests the pipeline, proves nothing about "
              "hardware; nothing written")
        for ins in inss:
            raw = simdevice.run(ins)
            results += observe.compare(ins, observe.from_raw(raw, simulated=True))
    else:
        cc, why = cuda_devices()
        if cc == 0:
            raise _Fail(f"no CUDA GPU: {why}; nothing written")
        nvcc = args.nvcc or find_nvcc()
        if not nvcc:
            raise _Fail("nvcc not found (PATH, CUDA_HOME, or pip install nvidia-cuda-nvcc); nothing written")
        out = Path(args.out)
        version = _nvcc_version(nvcc)
        with tempfile.TemporaryDirectory(prefix="ptx-probe-") as tmp:
            arch = f"sm_{cc}"
            for ins in inss:
                need = probes.arch_number(ins.arch)
                if cc < need or (ins.arch.endswith("a") and cc != need):
                    print(f"{ins.id:44s} skipped: needs {ins.arch}, this GPU is {arch}")
                    continue
                raw, sha = _run_probe(nvcc, ins, probes.build_arch(ins.arch, cc), Path(tmp), args.timeout)
                device = dict(raw.get("device", {}))
                obs = observe.from_raw(raw, simulated=False, probe_sha256=sha)
                rel = observe.relations(ins, obs)
                res = observe.compare(ins, obs, rel)
                name = f"{ins.id}.{observe.gpu_slug(str(device.get('name', 'gpu')))}.json"
                out.mkdir(parents=True, exist_ok=True)
                doc = observe.observation_json(ins, obs, rel, sha, {"nvcc": version, "built_for": arch})
                (out / name).write_text(observe.dumps(doc), encoding="utf-8")
                results += [observe.HardwareResult(r.layout, r.instruction, r.status, r.message, r.gpu, r.simulated,
                                                   r.violations, r.counterexample, str(out / name)) for r in res]
    if args.format == "json":
        sys.stdout.write(json.dumps({"schema": 1, "results": observe.results_json(results)}, indent=2,
                                    sort_keys=True) + "\n")
    else:
        for r in results:
            print(r.text_line())
        bad = sum(1 for r in results if r.status != "confirmed")
        tag = "SIMULATED: " if args.device == "simulated" else ""
        print(f"{tag}{len(results)} layout results: {len(results) - bad} confirmed, {bad} contradicted")
    return 0 if all(r.status == "confirmed" for r in results) else 1


def _guard(fn: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            return int(fn(args))
        except SpecError as e:
            print(e.one_line(), file=sys.stderr)
        except (_Fail, probes.ProbeError) as e:
            print(f"ptx-verify: error: {e}", file=sys.stderr)
        except (OSError, subprocess.SubprocessError) as e:
            print(f"ptx-verify: error: {e}", file=sys.stderr)
        return 2
    return run


def register(subparsers: Any) -> None:
    """Add ``probe`` and ``confirm`` to the ``ptx-verify`` command line."""
    p = subparsers.add_parser("probe", help="write CUDA probe kernels that run the real instruction")
    p.add_argument("ids", nargs="+", metavar="ID", help="layout ids (or unique parts of them)")
    p.add_argument("--emit", required=True, metavar="DIR", help="directory for the .cu files")
    p.add_argument("--specs", default="specs")
    p.set_defaults(func=_guard(cmd_probe))

    c = subparsers.add_parser("confirm", help="run the probes on a GPU and record observations")
    c.add_argument("ids", nargs="*", metavar="ID", help="layout ids (default: every probe-able instruction)")
    c.add_argument("--device", choices=("cuda", "simulated"), default="cuda",
                   help="cuda: a real GPU (writes observations); simulated: numpy, labelled, writes nothing")
    c.add_argument("--specs", default="specs")
    c.add_argument("--out", default="reports/observations", metavar="DIR")
    c.add_argument("--nvcc", default=None, help="path to nvcc (default: PATH, CUDA_HOME, nvidia-cuda-nvcc)")
    c.add_argument("--timeout", type=float, default=300.0, help="seconds per build and per run")
    c.add_argument("--format", choices=("text", "json"), default="text")
    c.set_defaults(func=_guard(cmd_confirm))
