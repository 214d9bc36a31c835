"""Shared-memory probes (verify/hardware/smem_probes.py): ldmatrix through lane addresses and wgmma through a
descriptor, over a tile written with codes naming its cells.  The programs are built with nvcc where a CUDA
toolkit is installed; their outputs are decoded on SIMULATED devices (no GPU here): a device following the
model decodes to the model, one that deviates is caught."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from verify import api
from verify.checks.descriptor import derive
from verify.hardware import smem_probes as sp
from verify.hardware.cuda import find_nvcc
from verify.layout.descriptor import Descriptor
from verify.layout.shared import MODES
from verify.layout.smem_access import default_pattern, parse_access

NVCC = find_nvcc()
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not found: probe programs are not built")


@pytest.fixture(scope="module")
def specs():  # type: ignore[no-untyped-def]
    return api.load("specs")


def _ldm(specs):  # type: ignore[no-untyped-def]
    lay = api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>{}, Shape<_16,_16>{})")
    acc = parse_access("ldmatrix.x4")
    pat = default_pattern(acc, 16)
    mov = api.layout(specs, "ldmatrix.m8n8.R.b16").instance(NUM=4)
    return lay, mov, pat, sp.ldmatrix_probe(lay, mov, pat, acc)


def _wg():  # type: ignore[no-untyped-def]
    a = api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>{}, Shape<_64,_16>{})")
    desc = derive(a).descriptor
    b = api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_INTER_Atom<half_t>{}, Shape<_16,_16>{})", base=16384)
    b_desc = derive(b).descriptor
    return a, desc, b, b_desc


def test_ldmatrix_probe_decodes(specs) -> None:  # type: ignore[no-untyped-def]
    lay, mov, pat, p = _ldm(specs)
    want = sp.prediction_ldmatrix(lay, mov, pat)
    assert want[(0, 0)] == (0, 0) and want[(0, 1)] == (0, 1) and want[(4, 0)] == (1, 0)  # mma A's order
    assert sp.compare(sp.decode(p, sp.simulate(p, want)), want) == []
    bad = sp.simulate(p, want)
    bad[0], bad[1] = bad[1], bad[0]  # a device that swaps two registers
    assert sp.compare(sp.decode(p, bad), want)[0].startswith("thread 0, element 0: the device read cell (8, 0)")


def test_wgmma_probe_decodes(specs) -> None:  # type: ignore[no-untyped-def]
    a, desc, b, b_desc = _wg()
    d = api.layout(specs, "wgmma.m64nNk16.D.f32").instance(N=16)
    p = sp.wgmma_probe(a, desc, "K", api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_INTER_Atom<half_t>{}, "
                                                        "Shape<_16,_16>{})"), b_desc)
    want = sp.prediction_wgmma(a, desc, "K", d)
    assert all(cell == (d.evaluate(lane=t, i=i)) for (t, i), cell in want.items())  # the descriptor reads A exactly
    assert sp.compare(sp.decode(p, sp.simulate(p, want)), want) == []
    # a descriptor with another swizzle reads other cells, and the probe would show where
    wrong = sp.prediction_wgmma(a, Descriptor("wgmma", 0, desc.lbo, desc.sbo, MODES["none"]), "K", d)
    assert sp.compare(sp.decode(p, sp.simulate(p, want)), wrong)


@needs_nvcc
def test_probe_programs_build(specs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, desc, b, b_desc = _wg()
    probes = [_ldm(specs)[3], sp.wgmma_probe(a, desc, "K", api.shared_layout(
        "cute", "tile_to_shape(GMMA::Layout_K_INTER_Atom<half_t>{}, Shape<_16,_16>{})"), b_desc)]
    for p in probes:
        cu = tmp_path / f"{p.name}.cu"
        cu.write_text(sp.source(p))
        r = subprocess.run(sp.build_command(p, NVCC, str(cu), str(tmp_path / p.name)), capture_output=True, text=True)  # type: ignore[arg-type]
        assert r.returncode == 0, (r.stderr + r.stdout)[-2000:]
        arch = p.arch.removeprefix("sm_")
        ptx = subprocess.run([NVCC, "-gencode", f"arch=compute_{arch},code=compute_{arch}", "-ptx", "-o", "-", str(cu)],  # type: ignore[list-item]
                             capture_output=True, text=True)
        assert p.text in ptx.stdout
