"""Issue 9: probes for the new instructions (verify/hardware/catalog_probes.py).

Every probe is assembled (nvcc -ptx + ptxas, one file per architecture) in test_confirm_catalog.py; the doc's
own register counts where the specs record a count erratum are rejected by ptxas; the data-movement probes' decoding is
exercised on SIMULATED outputs (no GPU here): the spec's own prediction decodes back to the spec, and a
device that deviates is caught."""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

from verify import api
from verify.hardware import catalog_probes as cp
from verify.hardware import kinds
from verify.hardware.cuda import find_nvcc, find_ptxas

from conftest import SPECS

NVCC = find_nvcc()
PTXAS = find_ptxas(NVCC)
needs_cuda = pytest.mark.skipif(not (NVCC and PTXAS), reason="nvcc/ptxas not found: probes are not assembled")


@functools.cache
def layouts() -> dict:
    return {lay.id: lay for lay in api.layouts(api.load([SPECS]))}


@functools.cache
def probes() -> tuple[cp.CatalogProbe, ...]:
    """The probes that write their registers out (every kind but mma and wgmma), with the negative ones."""
    found = kinds.all_probes(layouts().values(), negatives=True)[0]
    return tuple(p.payload for p in found if isinstance(p.payload, cp.CatalogProbe))


def _assemble(src: str, arch: str, work: Path, name: str) -> subprocess.CompletedProcess:
    cu = work / f"{name}.cu"
    cu.write_text(src)
    ptx = cu.with_suffix(".ptx")
    r = subprocess.run([NVCC, f"-arch={arch}", "-ptx", "-o", str(ptx), str(cu)], capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run([PTXAS, f"-arch={arch}", "-o", str(cu.with_suffix(".cubin")), str(ptx)],
                           capture_output=True, text=True)
    return r


def test_probes_cover_the_new_instructions() -> None:
    texts = {p.text.split(".sync")[0] for p in probes()}
    assert {"ldmatrix", "stmatrix", "movmatrix", "tcgen05.ld", "tcgen05.st", "wmma.load.a", "mma"} <= texts
    ids = {p.id for p in probes()}
    for num in (1, 2, 4, 8, 16, 32, 64, 128):  # every .num of .32x32b
        assert f"tcgen05.ld.32x32b.x{num}.b32" in ids
    assert "wmma.m16n16k16.f16.f32" in ids and "mma.block_scale.m16n8k64.4X.B.THREAD_ID_B=3,BYTE_ID_B=0" in ids
    assert {p.arch for p in probes()} == set(cp.ARCHS)
    assert len({p.name for p in probes()}) == len(probes())  # one kernel name per probe


@pytest.mark.slow  # runs the toolchain (nvcc/ptxas or g++): an integration test
@needs_cuda
def test_the_doc_counts_that_the_specs_call_errata_are_rejected(tmp_path: Path) -> None:
    """ptxas agrees with the errata: one .f64 wmma accumulator register, one register per .m16n16 ldmatrix
    matrix, .num registers for tcgen05 .16x128b/.16x256b are each an 'argument vector size' error."""
    neg = [p for p in probes() if p.negative]
    assert {p.id for p in neg} == {"wmma.m8n8k4.f64.f64.doc", "ldmatrix.m16n16.x1.trans.b8_b8x16.doc",
                                   "tcgen05.ld.16x128b.x1.b32.doc", "tcgen05.ld.16x256b.x1.b32.doc"}
    for p in neg:
        r = _assemble(cp.arch_source([p], p.arch), p.arch, tmp_path, p.name)
        assert r.returncode != 0, p.id
        assert "vector size" in (r.stderr + r.stdout).lower().replace("vector of size", "vector size"), p.id


@pytest.mark.slow
@needs_cuda
def test_a_standalone_probe_program_builds(tmp_path: Path) -> None:
    p = next(x for x in probes() if x.id == "ldmatrix.m8n8.x4.b16")
    cu = tmp_path / "p.cu"
    cu.write_text(cp.probe_program(p))
    gencode = f"arch={p.arch.replace('sm_', 'compute_')},code={p.arch}"
    r = subprocess.run([NVCC, "-gencode", gencode, "-o", str(tmp_path / "p"), str(cu)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]


def _layout_of(p: cp.CatalogProbe):
    """The layout the probe was built from, the member it runs, among those it tests: a corrected layout where
    the doc's is wrong (the doc's layout has other registers)."""
    return next(x for x in p.tested if cp._tag(x) == p.layouts[0])


def test_simulated_outputs_decode_to_the_spec() -> None:
    """SIMULATED device following the specs: every data-movement probe decodes back to its layout."""
    checked = 0
    for p in probes():
        if p.kind in ("wmma", "block_scale", "tcgen05_mma") or p.negative:  # their own tests: test_confirm_catalog.py
            continue
        if p.kind == "movmatrix":
            src, dst = layouts()[p.layouts[0]], layouts()[p.layouts[1]]
            obs = cp.decode(p, cp.simulate(p, dst, src), layouts())
            assert cp.compare(dst, obs) == [], p.id
        else:
            lay = _layout_of(p)
            # the comparison covers every register the probe reads (the doc's layout of a count erratum did not)
            assert lay.n_elements == p.meta["regs"] * p.meta.get("epr", 1), p.id
            assert cp.compare(lay, cp.decode(p, cp.simulate(p, lay))) == [], p.id
        checked += 1
    assert checked >= 90


def test_a_deviating_device_is_caught() -> None:
    """SIMULATED device that swaps the two halves of every register: the comparison names the elements."""
    p = next(x for x in probes() if x.id == "ldmatrix.m8n8.x1.b16")
    lay = _layout_of(p)
    out = [((w & 0xFFFF) << 16) | (w >> 16) for w in cp.simulate(p, lay)]
    bad = cp.compare(lay, cp.decode(p, out))
    assert bad and bad[0] == "lane 0 element r0: spec (0, 0), observed (0, 1)"
    q = next(x for x in probes() if x.id == "tcgen05.ld.16x64b.x1.b32")
    lay = _layout_of(q)
    out = cp.simulate(q, lay)
    out[5] = out[6]  # lane 5 reads lane 6's TMEM word
    assert cp.compare(lay, cp.decode(q, out))[0].startswith("lane 5 element r0")


def test_host_input_matches_the_kernel_fill() -> None:
    """The Python twin of the host fill, and the C expression, give the same words (evaluated here)."""
    for pid in ("ldmatrix.m8n8.x2.b16", "ldmatrix.m16n16.x2.trans.b8_b8x16", "stmatrix.m16n8.x4.trans.b8",
                "stmatrix.m8n8.x1.b16", "movmatrix.m8n8.trans.b16"):
        p = next(x for x in probes() if x.id == pid)
        expr = cp._host_fill(p)
        py = expr.replace("(uint32_t)", "").replace("0x01010101u", "0x01010101").replace("/", "//")
        py = py.replace("? ", " if ").replace(" : ", " else ")  # C ternary as a Python conditional
        if " if " in py:
            cond, rest = py.split(" if ", 1)
            then, other = rest.split(" else ", 1)
            py = f"(({then}) if ({cond}) else ({other}))"
        want = cp.host_input(p)
        for k in range(0, min(len(want), 1200), 7):
            assert eval(py, {"k": k}) & 0xFFFFFFFF == want[k], (pid, k)
