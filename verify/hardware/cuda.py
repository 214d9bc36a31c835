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
from typing import Any, Callable, Sequence

from . import observe, probes


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


def run_probe(nvcc: str, ins: probes.Instruction, arch: str, work: Path, timeout: float) -> tuple[dict[str, Any], str]:
    """Build and run one probe; (its raw JSON output, sha256 of its source)."""
    src = probes.probe_source(ins)
    cu = work / f"{ins.id}.cu"
    exe = work / ins.id
    cu.write_text(src, encoding="utf-8")
    b = subprocess.run([nvcc, f"-arch={arch}", "-O2", "-o", str(exe), str(cu)], capture_output=True, text=True,
                       timeout=timeout)
    if b.returncode != 0:
        raise HardwareError(f"{ins.id}: nvcc failed: {(b.stderr or b.stdout).strip().splitlines()[-1:]}")
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise HardwareError(f"{ins.id}: probe exited {r.returncode}: {r.stderr.strip()[:200]}")
    try:
        return json.loads(r.stdout), probes.source_sha256(src)
    except json.JSONDecodeError as e:
        raise HardwareError(f"{ins.id}: probe output is not JSON: {e}") from None


def nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = [ln for ln in out.splitlines() if "release" in ln]
    return lines[-1].strip() if lines else ""


def confirm_on_gpu(inss: Sequence[probes.Instruction], out: Path, nvcc: str | None, timeout: float,
                   say: Callable[[str], None]) -> list[observe.HardwareResult]:
    """Run every probe this GPU can run, write one observation file per probe, compare with the specs."""
    import tempfile  # noqa: PLC0415
    cc, why = cuda_devices()
    if cc == 0:
        raise HardwareError(f"no CUDA GPU: {why}; nothing written")
    nvcc = nvcc or find_nvcc()
    if not nvcc:
        raise HardwareError("nvcc not found (PATH, CUDA_HOME, or pip install nvidia-cuda-nvcc); nothing written")
    version = nvcc_version(nvcc)
    results: list[observe.HardwareResult] = []
    with tempfile.TemporaryDirectory(prefix="ptx-probe-") as tmp:
        arch = f"sm_{cc}"
        for ins in inss:
            need = probes.arch_number(ins.arch)
            if cc < need or (ins.arch.endswith("a") and cc != need):
                say(f"{ins.id:44s} skipped: needs {ins.arch}, this GPU is {arch}")
                continue
            raw, sha = run_probe(nvcc, ins, probes.build_arch(ins.arch, cc), Path(tmp), timeout)
            device = dict(raw.get("device", {}))
            obs = observe.from_raw(raw, simulated=False, probe_sha256=sha)
            rel = observe.relations(ins, obs)
            res = observe.compare(ins, obs, rel)
            name = f"{ins.id}.{observe.gpu_slug(str(device.get('name', 'gpu')))}.json"
            out.mkdir(parents=True, exist_ok=True)
            doc = observe.observation_json(ins, obs, rel, sha, {"nvcc": version, "built_for": arch})
            (out / name).write_text(observe.dumps(doc), encoding="utf-8")
            results += [dataclasses.replace(r, observation=str(out / name)) for r in res]
    return results


def confirm_simulated(inss: Sequence[probes.Instruction]) -> list[observe.HardwareResult]:
    """The whole pipeline on the SIMULATED numpy device that follows the specs (writes nothing)."""
    from . import simdevice  # noqa: PLC0415
    results: list[observe.HardwareResult] = []
    for ins in inss:
        raw = simdevice.run(ins)
        results += observe.compare(ins, observe.from_raw(raw, simulated=True))
    return results
