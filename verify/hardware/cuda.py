"""The CUDA side of confirmation: find the toolkit and the GPU, build and run probes, record.

A GPU result comes only from here, and only from a real device: every observation this module
writes says ``simulated: false`` and names the GPU, driver, toolkit and probe source hash.
"""
from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Sequence

from . import batch, kinds, observe, probes
from ..results.hardware import HardwareResult


class HardwareError(Exception):
    """No GPU, no toolkit, or a probe that fails to build or run: one line, exit 2."""


def find_nvcc() -> str | None:
    """nvcc from PATH, $CUDA_HOME, or the optional PyPI package ``nvidia-cuda-nvcc``."""
    found = shutil.which("nvcc")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "nvcc").is_file():
            return str(Path(home) / "bin" / "nvcc")
    try:
        import nvidia.cuda_nvcc as pkg
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


def nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = [ln for ln in out.splitlines() if "release" in ln]
    return lines[-1].strip() if lines else ""


ARCH_SPECIFIC = (90, 100, 101, 103, 110, 120, 121)  # compute capabilities with an sm_XXa target


def runnable(p: kinds.Probe, cc: int) -> bool:
    """Whether a GPU of compute capability ``cc`` runs ``p`` (an sm_XXa probe only on that very GPU)."""
    need = probes.arch_number(p.arch)
    return cc >= need and (not p.arch.endswith("a") or cc == need)


def build_target(inss: Sequence[kinds.Probe], cc: int) -> str:
    """The one target all runnable probes are built for: ``sm_XXa`` when one needs arch-specific features."""
    return f"sm_{cc}a" if cc in ARCH_SPECIFIC and any(p.arch.endswith("a") for p in inss) else f"sm_{cc}"


def _nvcc_build(nvcc: str, src: str, target: str, work: Path, name: str, timeout: float) -> subprocess.CompletedProcess:
    cu = work / f"{name}.cu"
    cu.write_text(src, encoding="utf-8")
    arch = target.replace("sm_", "compute_")
    return subprocess.run([nvcc, "-gencode", f"arch={arch},code={target}", "-O2", "-o", str(work / name), str(cu)],
                          capture_output=True, text=True, timeout=timeout)


def build_probes(nvcc: str, run: Sequence[kinds.Probe], target: str, work: Path, timeout: float,
                 say: Callable[[str], None]) -> tuple[Path, list[kinds.Probe]]:
    """Every probe in one translation unit, built once; a probe that does not build is named (each alone)
    and left out, and the rest built again."""
    programs = [(p.id, kinds.program(p)) for p in run]
    b = _nvcc_build(nvcc, batch.batch_program(programs), target, work, "probes", timeout)
    if b.returncode == 0:
        return work / "probes", list(run)
    kept = []
    for p, (_pid, src) in zip(run, programs):
        one = _nvcc_build(nvcc, src, target, work, "one", timeout)
        if one.returncode == 0:
            kept.append(p)
        else:
            say(f"{p.id:44s} not built for {target}: {(one.stderr or one.stdout).strip().splitlines()[-1:]}")
    if not kept:
        raise HardwareError(f"no probe builds for {target}: {(b.stderr or b.stdout).strip().splitlines()[-1:]}")
    b = _nvcc_build(nvcc, batch.batch_program([(p.id, kinds.program(p)) for p in kept]), target, work, "probes",
                    timeout)
    if b.returncode != 0:
        raise HardwareError(f"nvcc failed: {(b.stderr or b.stdout).strip().splitlines()[-1:]}")
    return work / "probes", kept


def run_probes(exe: Path, run: Sequence[kinds.Probe], timeout: float) -> dict[int, tuple[str, int]]:
    """Index -> (raw output, exit code) of every probe: all in one process, then each one missing (a probe
    that crashed the process, and every one after it) in a process of its own."""
    got: dict[int, tuple[str, int]] = {}
    try:
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout)
        got = {k: (text, rc) for k, (_pid, text, rc) in batch.frames(r.stdout).items()}
    except subprocess.TimeoutExpired:
        pass
    for k in range(len(run)):
        if k in got and got[k][1] in (0, 5):
            continue
        try:
            r = subprocess.run([str(exe), str(k)], capture_output=True, text=True, timeout=timeout)
            frame = batch.frames(r.stdout).get(k)
            got[k] = (frame[1], frame[2]) if frame else (r.stderr.strip()[:300], r.returncode or 1)
        except subprocess.TimeoutExpired:
            got[k] = (f"timed out after {timeout:g} s", 124)
    return got


def confirm_on_gpu(inss: Sequence[kinds.Probe], out: Path, nvcc: str | None, timeout: float,
                   say: Callable[[str], None]) -> list[HardwareResult]:
    """Build every probe this GPU can run in one translation unit, run them, write one observation file per
    probe, compare each with the layouts it tests."""
    import tempfile
    cc, why = cuda_devices()
    if cc == 0:
        raise HardwareError(f"no CUDA GPU: {why}; nothing written")
    nvcc = nvcc or find_nvcc()
    if not nvcc:
        raise HardwareError("nvcc not found (PATH, CUDA_HOME, or pip install nvidia-cuda-nvcc); nothing written")
    version = nvcc_version(nvcc)
    run = [p for p in inss if not p.negative and runnable(p, cc)]
    for p in inss:
        if not p.negative and not runnable(p, cc):
            say(f"{p.id:44s} skipped: needs {p.arch}, this GPU is sm_{cc}")
    if not run:
        return []
    target = build_target(run, cc)
    results: list[HardwareResult] = []
    with tempfile.TemporaryDirectory(prefix="ptx-probe-") as tmp:
        exe, run = build_probes(nvcc, run, target, Path(tmp), timeout, say)
        outputs = run_probes(exe, run, timeout)
        for k, p in enumerate(run):
            text, rc = outputs[k]
            try:
                raw = json.loads(text)
            except json.JSONDecodeError:
                raw = None
            if rc not in (0, 5) or raw is None:
                failed: list[str] | str = text.strip().splitlines()[-1:] if text.strip() else f"exit {rc}"
                say(f"{p.id:44s} did not run: {failed}")
                results += [HardwareResult(x.id, p.id, "error", f"{p.text}: the probe did not run ({failed})",
                                                   "", False, expected=kinds.expected(p, x))
                            for x in p.tested]
                continue
            sha = probes.source_sha256(kinds.program(p))
            obs = observe.from_raw(raw, simulated=False, probe_sha256=sha)
            name = f"{p.id}.{observe.gpu_slug(str(dict(raw.get('device', {})).get('name', 'gpu')))}.json"
            doc = kinds.record(p, obs, sha)
            doc.update({"nvcc": version, "built_for": target})
            out.mkdir(parents=True, exist_ok=True)
            (out / name).write_text(observe.dumps(doc), encoding="utf-8")
            results += [dataclasses.replace(r, observation=str(out / name)) for r in kinds.judge(p, obs)]
    return results


def confirm_simulated(inss: Sequence[kinds.Probe]) -> list[HardwareResult]:
    """The whole pipeline on the SIMULATED device that follows the specs (writes nothing)."""
    results: list[HardwareResult] = []
    for p in inss:
        if p.negative:
            continue
        results += kinds.judge(p, observe.from_raw(kinds.simulate(p), simulated=True))
    return results
