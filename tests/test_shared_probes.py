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
def specs():
    return api.load("specs")


def _ldm(specs):
    lay = api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>{}, Shape<_16,_16>{})")
    acc = parse_access("ldmatrix.x4")
    pat = default_pattern(acc, 16)
    mov = api.layout(specs, "ldmatrix.m8n8.R.b16").instance(NUM=4)
    return lay, mov, pat, sp.ldmatrix_probe(lay, mov, pat, acc)


def _wg():
    a = api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>{}, Shape<_64,_16>{})")
    desc = derive(a).descriptor
    b = api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_INTER_Atom<half_t>{}, Shape<_16,_16>{})", base=16384)
    b_desc = derive(b).descriptor
    return a, desc, b, b_desc


def test_ldmatrix_probe_decodes(specs) -> None:
    lay, mov, pat, p = _ldm(specs)
    want = sp.prediction_ldmatrix(lay, mov, pat)
    assert want[(0, 0)] == (0, 0) and want[(0, 1)] == (0, 1) and want[(4, 0)] == (1, 0)  # mma A's order
    assert sp.compare(sp.decode(p, sp.simulate(p, want)), want) == []
    bad = sp.simulate(p, want)
    bad[0], bad[1] = bad[1], bad[0]  # a device that swaps two registers
    assert sp.compare(sp.decode(p, bad), want)[0].startswith("thread 0, element 0: the device read cell (8, 0)")


def test_wgmma_probe_decodes(specs) -> None:
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


@pytest.mark.slow  # runs the toolchain (nvcc/ptxas or g++): an integration test
@needs_nvcc
def test_probe_programs_build(specs, tmp_path: Path) -> None:
    a, desc, b, b_desc = _wg()
    probes = [_ldm(specs)[3], sp.wgmma_probe(a, desc, "K", api.shared_layout(
        "cute", "tile_to_shape(GMMA::Layout_K_INTER_Atom<half_t>{}, Shape<_16,_16>{})"), b_desc)]
    for p in probes:
        cu = tmp_path / f"{p.name}.cu"
        cu.write_text(sp.source(p))
        r = subprocess.run(sp.build_command(p, NVCC, str(cu), str(tmp_path / p.name)), capture_output=True, text=True)
        assert r.returncode == 0, (r.stderr + r.stdout)[-2000:]
        arch = p.arch.removeprefix("sm_")
        ptx = subprocess.run([NVCC, "-gencode", f"arch=compute_{arch},code=compute_{arch}", "-ptx", "-o", "-", str(cu)],
                             capture_output=True, text=True)
        assert p.text in ptx.stdout


# ----------------------------------------------------------------------------- the catalog's map layouts (issue 21)

from assemble import assemble  # noqa: E402
from verify.cli import main  # noqa: E402
from verify.hardware import kinds, observe, smem_kind  # noqa: E402
from verify.hardware.cuda import find_ptxas  # noqa: E402
from verify.hardware.simdevice import Deviation  # noqa: E402

PTXAS = find_ptxas(NVCC)


def _catalog(specs):
    return kinds.all_probes(api.layouts(specs), maps=api.map_layouts(specs))


@pytest.mark.slow
def test_shared_map_layouts_are_probed_and_the_rest_say_why(specs) -> None:
    found, errors = _catalog(specs)
    shared = [p for p in found if p.kind == "shared"]
    ids = {x.id for p in shared for x in p.tested}
    assert {"wgmma.shared.atom.K.128B", "wgmma.shared.MN.none", "tcgen05.shared.atom.MN.128B_base32B",
            "wgmma.shared.K.128B@corrected", "wgmma.shared.example.MN.64B.bf16"} <= ids
    # a canonical atom gets both probes, at the 16-bit member (T = 8) and says so
    atom = {p.id: p for p in shared if p.tests("wgmma.shared.atom.K.128B")}
    assert sorted(atom) == ["smem.ldmatrix.wgmma.shared.atom.K.128B", "smem.wgmma.wgmma.shared.atom.K.128B"]
    assert all(p.tags == ("wgmma.shared.atom.K.128B@T=8",) for p in atom.values())
    assert next(p for p in shared if p.tests("wgmma.shared.K.none")).tags == ("wgmma.shared.K.none@Rk=1,Rm=1,T=8",)
    why = {e.split("] ", 1)[0][1:]: e.split("] ", 1)[1] for e in errors}
    assert "storage layout" in why["storage.sf.linear"]
    assert "tcgen05.datapath.D" not in why and "tcgen05.datapath.C" not in why  # (tests/test_tmem_probes.py)
    assert "tcgen05.cp.source.32x128b" not in why
    assert "injective refuted" in why["wgmma.shared.K.128B"]  # the doc's erratum: two cells at one offset
    assert why["wgmma.shared.example.K.none.tf32"].startswith("no wgmma probe: 32-bit elements")  # ldmatrix only
    assert "injective refuted" in why["wgmma.shared.example.K.32B.tf32"]  # the doc's erratum; its correction is probed
    assert {"wgmma.shared.example.K.none.tf32", "wgmma.shared.example.K.32B.tf32@corrected"} <= ids
    assert "no wgmma probe" in why["tcgen05.shared.atom.MN.128B_base32B"]  # no wgmma mode reads it
    # the SIMULATED device that follows the specs: every shared probe confirmed, labelled
    for p in shared:
        res = kinds.judge(p, observe.from_raw(kinds.simulate(p), simulated=True))
        assert [r.status for r in res] == ["confirmed"] and res[0].simulated and "SIMULATED" in res[0].message


@pytest.mark.parametrize("pid", ["smem.ldmatrix.wgmma.shared.atom.K.128B", "smem.wgmma.wgmma.shared.atom.K.128B",
                                 "smem.ldmatrix.wgmma.shared.MN.64B", "smem.wgmma.tcgen05.shared.atom.MN.none"])
@pytest.mark.slow
def test_a_deviating_device_is_caught_for_shared_probes(specs, pid: str, tmp_path: Path) -> None:
    p = next(p for p in _catalog(specs)[0] if p.id == pid)
    pred = p.payload.predicted
    first = (0, 0)
    second = next(e for e in sorted(pred) if pred[e] != pred[first])
    dev = Deviation(p.tested[0].id, first, second)
    raw = kinds.simulate(p, dev)
    assert "SIMULATED" in raw["device"]["name"] and dev.name in raw["device"]["name"]
    res = kinds.judge(p, observe.from_raw(raw, simulated=True))
    assert [r.status for r in res] == ["contradicted"] and not res[0].as_expected
    assert "SIMULATED" in res[0].message and "thread 0, element 0" in res[0].message
    # through an observation file, as check --observations reads it
    (tmp_path / "x.json").write_text(observe.dumps(kinds.record(p, observe.from_raw(raw, simulated=True), "0" * 64)))
    again = kinds.check_observations(api.layouts(specs), tmp_path, api.map_layouts(specs))
    assert [(r.layout, r.status) for r in again] == [(p.tested[0].id, "contradicted")]
    assert main(["check", "specs/wgmma.shared.toml", "specs/tcgen05.shared.toml", "specs/ldmatrix.m8n8.toml",
                 "specs/wgmma.m64nNk16.toml", "--observations", str(tmp_path)]) == 1


def test_probe_cli_emits_shared_map_layouts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "wgmma.shared.atom.K.128B", "--emit", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[wgmma.shared.atom.K.128B@T=8]" in out
    written = sorted(f.name for f in tmp_path.iterdir())
    assert written == ["README.md", "smem.ldmatrix.wgmma.shared.atom.K.128B.cu", "smem.wgmma.wgmma.shared.atom.K.128B.cu"]
    src = (tmp_path / "smem.wgmma.wgmma.shared.atom.K.128B.cu").read_text()
    assert "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16" in src and "int main()" in src
    assert "`smem.ldmatrix.wgmma.shared.atom.K.128B`" in (tmp_path / "README.md").read_text()


@pytest.mark.parametrize("lid", ["wgmma.shared.example.K.none.tf32", "wgmma.shared.example.K.32B.tf32@corrected"])
def test_probe_cli_emits_32_bit_shared_layouts(lid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", lid, "--emit", str(tmp_path)]) == 0
    assert f"smem.ldmatrix.{lid}.cu" in capsys.readouterr().out
    assert sorted(f.name for f in tmp_path.iterdir()) == ["README.md", f"smem.ldmatrix.{lid}.cu"]
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in (tmp_path / f"smem.ldmatrix.{lid}.cu").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("lid", ["wgmma.shared.example.K.none.tf32", "wgmma.shared.example.K.32B.tf32@corrected"])
def test_32_bit_elements_are_read_as_two_halves(specs, lid: str) -> None:
    p = next(p for p in _catalog(specs)[0] if p.id == f"smem.ldmatrix.{lid}")
    sh = p.payload
    assert sh.bits == 32 and (sh.tile.rows, sh.tile.cols) == (64, 16)  # 64 x 8 elements, 16 halves a row
    lay = next(m for m in api.map_layouts(specs) if m.id == lid)
    # the image: element (r, c) as the 16-bit codes 2 x (r x 8 + c) and 2 x (r x 8 + c) + 1, low half first,
    # at 16-bit offsets 2 x offset(r, c) and 2 x offset(r, c) + 1 (the layout's own offsets, r < 16, c < 8)
    img = sh.probe.image
    for r, c in [(0, 0), (1, 3), (9, 5), (15, 7)]:
        off = lay.map.at({"row": r, "col": c})["offset"]
        assert img[off] == (2 * (r * 8 + c)) | ((2 * (r * 8 + c) + 1) << 16)
    # ldmatrix.b16 hands lane t the two halves of element (t / 4, t % 4) in one register (the tf32 fragment)
    assert [sh.predicted[(t, i)] for t, i in [(0, 0), (0, 1), (1, 0), (1, 1), (4, 0)]] == \
        [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    good = kinds.simulate(p)
    assert [r.status for r in kinds.judge(p, observe.from_raw(good, simulated=True))] == ["confirmed"]
    # a SIMULATED device that swaps two elements (both halves of (0, 0) with both of (0, 1))
    swap = {(0, 0): (1, 0), (0, 1): (1, 1), (1, 0): (0, 0), (1, 1): (0, 1)}
    raw = smem_kind.simulate(sh, lambda t, i: swap.get((t, i), (t, i)))
    viol = smem_kind.violations(sh, raw)
    assert [v[0] for v in viol] == [
        "thread 0, 16-bit piece 0: the device read element (0, 1) low half, the layout says element (0, 0) low half",
        "thread 0, 16-bit piece 1: the device read element (0, 1) high half, the layout says element (0, 0) high half",
        "thread 1, 16-bit piece 0: the device read element (0, 0) low half, the layout says element (0, 1) low half",
        "thread 1, 16-bit piece 1: the device read element (0, 0) high half, the layout says element (0, 1) high half"]
    # one half misplaced: the high half of element (0, 0) where the low half should be (a device with the
    # halves of an element in the other order)
    words = smem_kind.simulate(sh, lambda t, i: (0, 1) if (t, i) == (0, 0) else (t, i))
    raw = dict(good, out=words, device=dict(good["device"], name="SIMULATED device (one half misplaced)"))
    res = kinds.judge(p, observe.from_raw(raw, simulated=True))
    assert [r.status for r in res] == ["contradicted"] and "SIMULATED" in res[0].message
    assert "thread 0, 16-bit piece 0: the device read element (0, 0) high half, the layout says element (0, 0) low " \
        "half" in res[0].message
    assert res[0].counterexample.to_json() == {"thread": 0, "i": 0, "observed": [0, 0, 1], "expected": [0, 0, 0]}


def test_32_bit_elements_past_the_code_range_are_refused() -> None:
    from verify.layout.named import formula_map
    from verify.layout.dims import Dim
    big = formula_map("offset = row * 128 + col", (Dim("row", 256), Dim("col", 128)), (Dim("offset", 32768),))
    with pytest.raises(smem_kind.NotProbed, match="two 16-bit codes per element do not fit the codes 0..0xFFFE"):
        smem_kind.halves(big, 256, 128)


@pytest.mark.parametrize("lid, why", [("storage.sf.linear", "storage layout")])
def test_probe_cli_says_why_a_map_layout_cannot_be_probed(lid: str, why: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", lid, "--emit", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"ptx-verify: error: {lid} cannot be probed: ") and why in err[0]
    assert "no layout" not in err[0] and not (tmp_path / "out").exists()


def test_confirm_simulated_runs_shared_map_layouts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["confirm", "wgmma.shared.atom.MN.128B", "--device", "simulated"]) == 0
    out = capsys.readouterr().out.splitlines()
    hw = [ln for ln in out if "hardware:" in ln]
    assert len(hw) == 2 and all("SIMULATED hardware:ok" in ln for ln in hw)
    assert out[-1].startswith("SIMULATED: 2 layout results: 2 confirmed")


@pytest.mark.slow
@pytest.mark.skipif(not (NVCC and PTXAS), reason="nvcc/ptxas not found: probes are not assembled")
def test_every_shared_probe_assembles_in_one_translation_unit(specs, tmp_path: Path) -> None:
    shared = [p for p in _catalog(specs)[0] if p.kind == "shared"]
    assert {p.arch for p in shared} == {"sm_90a"}
    assert {"smem.ldmatrix.wgmma.shared.example.K.none.tf32",  # the 32-bit layouts' probes (two codes an element)
            "smem.ldmatrix.wgmma.shared.example.K.32B.tf32@corrected"} <= {p.id for p in shared}
    rc, err, text = assemble(shared, "sm_90a", tmp_path / "shared.cu")
    assert rc == 0, err
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in text and "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16" in text
