"""Probe kernels: instruction grouping and text, encodings, and real assembly with nvcc + ptxas."""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from verify import api
from verify.hardware import probes
from verify.hardware.cuda import cuda_devices, find_nvcc, find_ptxas
from verify.catalog.spec import load_spec_text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_observe import M8N8K4, M16N8K16  # noqa: E402


def _all_instructions() -> list[probes.Instruction]:
    extra = load_spec_text(M16N8K16, "<m16n8k16>").layouts + load_spec_text(M8N8K4, "<m8n8k4>").layouts
    return probes.instructions(api.layouts(api.load(str(ROOT / "specs")))) + probes.instructions(extra)


def test_min_arch() -> None:
    assert probes.min_arch("mma", "m8n8k4", ["f16", "f32"]) == "sm_70"
    assert probes.min_arch("mma", "m8n8k16", ["s8", "s32"]) == "sm_75"
    assert probes.min_arch("mma", "m16n8k16", ["f16", "f32"]) == "sm_80"
    assert probes.min_arch("mma", "m16n8k32", ["e4m3", "f32"]) == "sm_89"
    assert probes.min_arch("mma", "m16n8k16", ["f64"]) == "sm_90"
    assert probes.min_arch("mma.sp", "m16n8k32", ["s8", "s32"]) == "sm_80"
    with pytest.raises(probes.ProbeError):
        probes.min_arch("wgmma", "m64n8k16", ["f16"])


def test_m8n8k16_spec_instructions() -> None:
    inss = probes.instructions(api.layouts(api.load(str(ROOT / "specs" / "mma.m8n8k16.toml"))))
    assert [i.text for i in inss] == ["mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32",
                                      "mma.sync.aligned.m8n8k16.row.col.s32.u8.u8.s32"]
    src = probes.probe_source(inss[0])
    asm = re.search(r'asm volatile\("([^"]*)"', src)[1]
    assert asm == "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0, %1}, {%2}, {%3}, {%4, %5};"
    assert "#define A_ONE 0x1ull" in src and "#define C_EPR 1" in src


def test_m8n8k4_variants_and_sparse_operands() -> None:
    lays = load_spec_text(M8N8K4.replace('variant = "col"', 'variant = "row"').replace(
        "row =       i                 for bi", "row = %laneid % 4 + 0 * i for bi").replace(
        "col =      %laneid % 4        if", "col =      i        if").replace(
        "(%laneid % 4) + 4   otherwise", "i + 4   otherwise"), "<row.row>").layouts
    ins = probes.instructions(lays)[0]
    assert ins.text == "mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32"
    sparse = [i for i in _all_instructions() if i.sparse and "e2m1" not in i.id]
    if sparse:
        src = probes.probe_source(sparse[0])
        assert re.search(r"\{[^}]*\}, %\d+, 0x0;", src)  # metadata register and selector 0x0
        assert "0x44444444u, 0xeeeeeeeeu" in src


def test_one_encodings() -> None:
    assert struct.unpack("<e", struct.pack("<H", probes.ONE_BITS["f16"]))[0] == 1.0
    assert struct.unpack("<f", struct.pack("<I", probes.ONE_BITS["bf16"] << 16))[0] == 1.0
    assert struct.unpack("<f", struct.pack("<I", probes.ONE_BITS["tf32"]))[0] == 1.0
    assert struct.unpack("<d", struct.pack("<Q", probes.ONE_BITS["f64"]))[0] == 1.0

    def minifloat(bits: int, e: int, m: int) -> float:
        exp, man = (bits >> m) & ((1 << e) - 1), bits & ((1 << m) - 1)
        return (1 + man / (1 << m)) * 2.0 ** (exp - ((1 << (e - 1)) - 1))
    assert minifloat(probes.ONE_BITS["e4m3"], 4, 3) == 1.0
    assert minifloat(probes.ONE_BITS["e5m2"], 5, 2) == 1.0


def test_packing_rejected_when_register_cannot_hold() -> None:
    bad = M16N8K16.replace('registers = 2\nregister_type = "f16x2"\nelements_per_register = 2',
                           'registers = 1\nregister_type = "f16x2"\nelements_per_register = 4', 1)
    lays = load_spec_text(bad, "<bad>").layouts
    found, errors = probes._group(lays)
    assert found == []
    assert any("register" in e for e in errors)


def test_emit_cli(tmp_path: Path) -> None:
    from verify.cli import main
    assert main(["probe", "mma.m8n8k16.A", "--emit", str(tmp_path), "--specs", str(ROOT / "specs")]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["README.md", "mma.m8n8k16.row.col.s32.s8.s8.s32.cu", "mma.m8n8k16.row.col.s32.u8.u8.s32.cu"]
    assert "nvcc -gencode arch=compute_75,code=sm_75" in (tmp_path / "README.md").read_text()


# ----------------------------------------------------------------------------- real assembly

NVCC = find_nvcc()
PTXAS = find_ptxas(NVCC)
needs_cuda = pytest.mark.skipif(not (NVCC and PTXAS), reason="nvcc/ptxas not found (PATH, CUDA_HOME or pip package "
                                "nvidia-cuda-nvcc): probes are not assembled")


def _oldest_arch() -> int:
    out = subprocess.run([NVCC, "--list-gpu-arch"], capture_output=True, text=True).stdout
    archs = [int(a) for a in re.findall(r"compute_(\d+)", out)]
    return min(archs) if archs else 75


def _assemble(ins: probes.Instruction, arch: str, work: Path) -> tuple[str, int, str, float]:
    cu = work / f"{ins.id}.{arch}.cu"
    cu.write_text(probes.probe_source(ins))
    ptx, cubin = cu.with_suffix(".ptx"), cu.with_suffix(".cubin")
    t0 = time.perf_counter()
    r = subprocess.run([NVCC, f"-arch={arch}", "-ptx", "-o", str(ptx), str(cu)], capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run([PTXAS, f"-arch={arch}", "-o", str(cubin), str(ptx)], capture_output=True, text=True)
    text = ptx.read_text() if ptx.exists() else ""
    return ins.id, r.returncode, (r.stderr + r.stdout) + "\n" + text, time.perf_counter() - t0


def _assemble_source(source: str, arch: str, work: Path, name: str) -> tuple[int, str]:
    cu = work / f"{name}.{arch}.cu"
    cu.write_text(source)
    ptx, cubin = cu.with_suffix(".ptx"), cu.with_suffix(".cubin")
    r = subprocess.run([NVCC, f"-arch={arch}", "-ptx", "-o", str(ptx), str(cu)], capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run([PTXAS, f"-arch={arch}", "-o", str(cubin), str(ptx)], capture_output=True, text=True)
    return r.returncode, (r.stderr + r.stdout) + "\n" + (ptx.read_text() if ptx.exists() else "")


@pytest.mark.slow
@needs_cuda
def test_every_probe_assembles(tmp_path: Path) -> None:
    """Every instruction of every spec (plus the test specs) through nvcc -ptx and ptxas at its minimal arch:
    one translation unit per architecture; only when one fails, each of its probes alone, to name the culprit."""
    inss = _all_instructions()
    oldest = _oldest_arch()
    by_arch: dict[str, list[probes.Instruction]] = {}
    for ins in inss:
        by_arch.setdefault(ins.arch if ins.arch.endswith("a") else f"sm_{max(probes.arch_number(ins.arch), oldest)}",
                           []).append(ins)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        done = dict(zip(by_arch, pool.map(lambda a: _assemble_source(probes.batch_source(by_arch[a]), a, tmp_path,
                                                                      "all"), by_arch)))
    wall = time.perf_counter() - t0
    bad = []
    for arch, (rc, out) in sorted(done.items()):
        if rc != 0:  # name the failing probes
            bad += [(iid, o[:400]) for iid, r, o, _ in (_assemble(i, arch, tmp_path) for i in by_arch[arch]) if r != 0]
            assert bad, f"{arch}: the batch fails but every probe alone assembles: {out[:400]}"
            continue
        for ins in by_arch[arch]:
            assert ins.text in out, ins.id  # the exact instruction reached the PTX
    assert not bad, bad
    print(f"\nassembled {len(inss)} probes in {len(by_arch)} files in {wall:.1f}s wall")


def test_a_batch_holds_every_probe_once() -> None:
    """The batch for assembly is the standalone probes side by side: each probe's kernel and asm, once."""
    inss = _all_instructions()[:6]
    src = probes.batch_source(inss)
    for k, ins in enumerate(inss):
        assert f"namespace probe_{k} {{" in src and src.count(f'asm volatile("{ins.text} ') == sum(
            1 for x in inss if x.text == ins.text)
    assert "int main()" not in src and src.count("#include <cuda_runtime.h>") == 1


@pytest.mark.slow  # runs the toolchain (nvcc/ptxas or g++): an integration test
@needs_cuda
def test_assembly_can_fail(tmp_path: Path) -> None:
    """ptxas rejects an sm_80 instruction for sm_75, so the test above is not vacuous."""
    ins = probes.instructions(load_spec_text(M16N8K16, "<t>").layouts)[0]
    _iid, rc, out, _s = _assemble(ins, "sm_75", tmp_path)
    assert rc != 0 and "requires .target sm_80" in out


@pytest.mark.slow  # runs the toolchain (nvcc/ptxas or g++): an integration test
@needs_cuda
def test_host_program_builds_and_runs(tmp_path: Path) -> None:
    ins = probes.instructions(api.layouts(api.load(str(ROOT / "specs" / "mma.m8n8k16.toml"))))[0]
    cu = tmp_path / "p.cu"
    cu.write_text(probes.probe_source(ins))
    exe = tmp_path / "p"
    r = subprocess.run([NVCC, "-arch=sm_75", "-o", str(exe), str(cu)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    if cuda_devices()[0]:
        import json
        from verify.hardware import explain, observe
        obs = observe.from_raw(json.loads(run.stdout), simulated=False)
        assert all(x.status == "confirmed" for x in explain.compare(ins, obs))
    else:
        assert run.returncode == 3 and "no CUDA device" in run.stderr and run.stdout == ""
