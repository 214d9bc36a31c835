"""Hardware-truth issue, item 0: the whole catalog is ready for a GPU.

* every layout id of the bundled catalog is tested by a probe (``probe ID`` works for each);
* every probe program assembles for its architecture, one translation unit per architecture (nvcc -ptx +
  ptxas), and the batch ``confirm --device cuda`` builds for an sm_90a GPU links and runs (no GPU here:
  every probe says so);
* the SIMULATED device runs the whole catalog through ``confirm`` and ``check --observations``;
* a deliberately deviating SIMULATED device is caught for every kind.

What the simulated device shows is the pipeline (probe experiments, decoding, comparison), never the
hardware: it computes what a device doing what the specs say (or a given deviation) would print."""
from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from assemble import assemble
from verify import api
from verify.cli import main
from verify.hardware import batch, catalog_probes as cp, cuda, kinds, observe
from verify.hardware.cuda import find_nvcc, find_ptxas
from verify.hardware.simdevice import Deviation

from conftest import SPECS
from verify.layout.model import cell_at

NVCC = find_nvcc()
PTXAS = find_ptxas(NVCC)
needs_cuda = pytest.mark.skipif(not (NVCC and PTXAS), reason="nvcc/ptxas not found: probes are not assembled")

# one representative spec file per kind of probe, for the CLI tests
KIND_SPECS = ("mma.m8n8k16.toml", "mma.sp.m16n8k16.tf32.toml", "wgmma.m64nNk8.toml", "wgmma.sp.m64nNk16.toml",
              "ldmatrix.m8n8.toml", "stmatrix.m8n8.toml", "movmatrix.toml", "tcgen05.ld.16x64b.toml",
              "tcgen05.st.32x32b.toml", "wmma.m8n8k4.toml", "mma.block_scale.m16n8k32.toml",
              "mma.m16n8k32.toml", "tcgen05.mma.block_scale.toml", "wgmma.shared.toml",
              "tcgen05.datapath.toml")


@functools.cache
def layouts() -> tuple:
    return tuple(api.layouts(api.load([SPECS])))


@functools.cache
def catalog() -> tuple[kinds.Probe, ...]:
    found, errors = kinds.all_probes(layouts())
    assert not errors, errors
    return tuple(found)


def test_every_layout_id_can_be_probed() -> None:
    ids = {lay.id for lay in layouts()}
    tested = {x.id for p in catalog() for x in p.tested}
    assert tested == ids
    assert len(ids) == 217
    # the shared and tmem kinds probe map layouts (not fragments): tests/test_shared_probes.py, test_tmem_probes.py
    assert {p.kind for p in catalog()} == {k.name for k in kinds.KINDS} - {"shared", "tmem"}


def test_probe_ids_and_kernel_names_are_unique() -> None:
    assert len({p.id for p in catalog()}) == len(catalog())
    names = [p.payload.name for p in catalog() if isinstance(p.payload, cp.CatalogProbe)]  # extern "C" kernels
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("lid", ["wgmma.m64nNk16.D.f32@corrected", "wgmma.sp.m64nNk64.A.u8_s8",
                                 "ldmatrix.m8n16.R.b8x16", "wmma.m8n8k128.A.b1", "mma.block_scale.m16n8k64.SFB.ue4m3",
                                 "tcgen05.mma.m1n4.SFA.ue8m0.2x", "mma.m16n8k64.A.e2m1", "tcgen05.st.16x256b.R.b32"])
def test_probe_cli_writes_every_kind(lid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``probe ID`` for ids that were refused before: one standalone program per probe and a build note."""
    assert main(["probe", lid, "--emit", str(tmp_path)]) == 0
    written = sorted(f.name for f in tmp_path.iterdir())
    assert "README.md" in written and len(written) >= 2
    mine = [p for p in catalog() if p.tests(lid) and not p.negative]
    assert sorted(p.id + ".cu" for p in mine) == sorted(n for n in written if n.endswith(".cu"))
    for p in mine:
        src = (tmp_path / f"{p.id}.cu").read_text()
        assert p.text in src and "int main()" in src
    note = (tmp_path / "README.md").read_text()
    assert all(f"`{p.id}`" in note for p in mine)


# ----------------------------------------------------------------------------- assembly

def _oldest() -> int:
    out = subprocess.run([NVCC, "--list-gpu-arch"], capture_output=True, text=True).stdout
    archs = [int(a) for a in re.findall(r"compute_(\d+)", out)]
    return min(archs) if archs else 75


def _target(arch: str, oldest: int) -> str:
    n = int(re.sub(r"\D", "", arch))
    return arch if arch.endswith("a") else f"sm_{max(n, oldest)}"


@pytest.mark.slow
@needs_cuda
def test_every_probe_program_assembles_one_translation_unit_per_architecture(tmp_path: Path) -> None:
    """The programs ``confirm --device cuda`` builds, all of one architecture in one file, through nvcc -ptx and
    ptxas at that architecture; each exact instruction reaches the PTX."""
    oldest = _oldest()
    groups: dict[str, list[kinds.Probe]] = {}
    newer: list[kinds.Probe] = []  # instructions of a PTX ISA release this toolkit's ptxas does not know
    for p in catalog():
        if _needs_newer_ptx(p):
            newer.append(p)
            continue
        groups.setdefault(_target(p.arch, oldest), []).append(p)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        done = dict(zip(groups, pool.map(lambda t: assemble(groups[t], t, tmp_path / f"{t}.cu"), groups)))
    assert {"sm_90a", "sm_100a", "sm_120a"} <= set(groups)
    for target, (rc, err, ptx) in sorted(done.items()):
        assert rc == 0, f"{target}: {err}"
        for p in groups[target]:
            assert p.text in ptx, (target, p.id)
    for p in newer:  # the toolkit's ptxas refuses what its release does not state (.scale_vec::4X with .ue8m0)
        rc, err, _ = assemble([p], _target(p.arch, oldest), tmp_path / "newer.cu")
        assert rc != 0 and "ue8m0" in err, (p.id, err)


def _toolkit_ptx_isa() -> tuple[int, ...]:
    """The PTX ISA release of this nvcc (CUDA 13.0: 9.0, 13.1: 9.1; CUDA 12.x: 8.x)."""
    out = subprocess.run([str(NVCC), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    major, minor = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    return (major - 4, minor) if major >= 13 else (8, minor - 1) if major == 12 else (0, 0)


def _needs_newer_ptx(p: kinds.Probe) -> bool:
    need = getattr(p.payload, "meta", {}).get("ptx_isa", "")
    return bool(need) and tuple(int(x) for x in need.split(".")) > _toolkit_ptx_isa()


@pytest.mark.slow
@needs_cuda
def test_the_gpu_build_of_one_architecture_links_and_runs(tmp_path: Path) -> None:
    """``confirm --device cuda``'s own build (every runnable probe of an sm_90a GPU in one program); without a
    GPU each probe runs, says so and exits 3, framed so that the runner can tell them apart."""
    run = [p for p in catalog() if cuda.runnable(p, 90)]
    assert {p.kind for p in run} >= {"mma", "wgmma", "movement", "wmma"}
    exe, kept = cuda.build_probes(NVCC, run, cuda.build_target(run, 90), tmp_path, 600, print)
    assert kept == run
    r = subprocess.run([str(exe), "3"], capture_output=True, text=True, timeout=120)
    frames = batch.frames(r.stdout)
    if cuda.cuda_devices()[0] == 0:
        assert list(frames) == [3] and frames[3][0] == run[3].id and frames[3][2] == 3


def test_the_runner_reruns_the_probes_a_crash_took_down(tmp_path: Path) -> None:
    """A probe that kills the process (an illegal instruction) loses the frames of every probe after it: the
    runner runs each of those alone, and reports the culprit as not run."""
    fake = tmp_path / "probes"
    fake.write_text(f"#!{sys.executable}\n" + r'''
import sys
only = int(sys.argv[1]) if len(sys.argv) > 1 else -1
for k in range(4):
    if only >= 0 and k != only:
        continue
    print(f"@@probe {k} p{k}")
    if k == 1:
        sys.stdout.flush()
        sys.exit(134)  # the process dies inside probe 1
    print('{"out": [%d]}' % k)
    print(f"@@end {k} 0")
''')
    fake.chmod(0o755)
    got = cuda.run_probes(fake, [None] * 4, 30)
    assert {k: rc for k, (_t, rc) in got.items()} == {0: 0, 1: 134, 2: 0, 3: 0}
    assert json.loads(got[3][0]) == {"out": [3]}


# ----------------------------------------------------------------------------- the SIMULATED device

@functools.cache
def _simulated() -> tuple[tuple[kinds.Probe, dict], ...]:
    return tuple((p, kinds.simulate(p)) for p in catalog())


@pytest.mark.slow
def test_confirm_simulated_runs_the_whole_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["confirm", "--device", "simulated"]) == 0
    out = capsys.readouterr().out.splitlines()
    results = [ln for ln in out if "hardware:" in ln]
    assert len(results) > 500 and all("SIMULATED hardware:" in ln for ln in results)
    assert out[-1].startswith("SIMULATED: ") and out[-1].endswith(" 0 unexpected")
    for probe in ("(wgmma.m64", "(wgmma.sp.", "(tcgen05.mma.", "(wmma.", "(ldmatrix.", "(mma.block_scale.", "(mma.sp."):
        assert any(probe in ln for ln in results), probe


@pytest.mark.slow
def test_check_observations_judges_every_kind(tmp_path: Path) -> None:
    """Observation files of the whole catalog (SIMULATED) through ``check --observations``'s comparison: every
    tested layout judged, each as its spec expects, every kind present, the map of a wmma reported observed."""
    for p, raw in _simulated():
        obs = observe.from_raw(raw, simulated=True)
        (tmp_path / f"{p.id}.simulated.json").write_text(observe.dumps(kinds.record(p, obs, "0" * 64)))
    res = kinds.check_observations(layouts(), tmp_path)
    assert len(res) == sum(len(p.tested) for p in catalog())
    assert all(r.as_expected and r.simulated for r in res), [r.message for r in res if not r.as_expected][:3]
    assert {r.layout for r in res} == {lay.id for lay in layouts()}
    wmma = [r for r in res if r.layout.startswith("wmma.")]
    assert wmma and {r.status for r in wmma} == {"observed", "contradicted"}  # contradicted: the C.f64 erratum
    assert all("unspecified" in r.message for r in wmma if r.status == "observed")


@pytest.mark.slow
def test_check_cli_with_observations_of_every_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    for name in KIND_SPECS:
        (specs / name).write_text((SPECS / name).read_text())
    loaded = api.load([str(specs)])
    lays = api.layouts(loaded)
    obs_dir = tmp_path / "obs"
    obs_dir.mkdir()
    found = [p for p in kinds.all_probes(lays, maps=api.map_layouts(loaded))[0] if not p.negative]
    assert {p.kind for p in found} == {k.name for k in kinds.KINDS}
    for p in found:
        obs = observe.from_raw(kinds.simulate(p), simulated=True)
        (obs_dir / f"{p.id}.simulated.json").write_text(observe.dumps(kinds.record(p, obs, "0" * 64)))
    assert main(["check", str(specs), "--observations", str(obs_dir), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    hw = [f for f in doc["findings"] if f["check"] == "hardware"]
    assert len(hw) == sum(len(p.tested) for p in found) and all(f["as_expected"] and f["simulated"] for f in hw)
    # one deviating observation: check exits 1 and names the element
    p = next(p for p in found if p.kind == "movement" and p.id.startswith("ldmatrix.m8n8.x1.b16"))
    lay = p.tested[0]
    raw = kinds.simulate(p, Deviation(lay.id, (0, 0), (0, 1)))
    (obs_dir / f"{p.id}.simulated.json").write_text(observe.dumps(kinds.record(p, observe.from_raw(raw, simulated=True),
                                                                                "0" * 64)))
    assert main(["check", str(specs), "--observations", str(obs_dir)]) == 1
    assert "lane 0 element r0" in capsys.readouterr().out


# ----------------------------------------------------------------------------- deviating devices, per kind

def _operand_layout(p: kinds.Probe) -> object:
    """The layout whose map the probe's registers follow (relational: A; direct: the corrected one, or the
    probe's only layout of its operand)."""
    if p.kind in ("mma", "wgmma"):
        return p.payload.a.layout
    if p.kind == "movement" and p.payload.kind == "movmatrix":
        return next(x for x in p.tested if x.operand == "D")
    if p.kind == "wmma":
        return next(x for x in p.tested if x.operand == "A")
    return next((x for x in p.tested if x.corrected), p.tested[0])


def _deviation(p: kinds.Probe) -> Deviation:
    """Two elements of the probe's layout with different cells, swapped (wmma: one takes the other's cell,
    since the doc states no map to swap against)."""
    lay = _operand_layout(p)
    threads = getattr(lay, "threads", 32)
    if p.kind == "wmma":
        return Deviation(lay.id, (0, 0), (0, 1), mode="copy")
    if p.kind == "tcgen05_mma":  # the byte in use and one that is not
        used = next(i for i in range(4) if cell_at(lay, 0, i) is not None)
        return Deviation(lay.id, (0, used), (0, next(i for i in range(4) if cell_at(lay, 0, i) is None)))
    points = [(ln, i) for ln in range(threads) for i in range(lay.n_elements) if cell_at(lay, ln, i) is not None]
    first = points[0]
    second = next(e for e in points if cell_at(lay, *e) != cell_at(lay, *first))
    return Deviation(lay.id, first, second)


FAMILIES = ("mma", "mma.sp", "wgmma", "wgmma.sp", "ldmatrix", "stmatrix", "movmatrix", "tcgen05.ld", "tcgen05.st",
            "wmma", "mma.block_scale", "tcgen05.mma")


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_a_deviating_device_is_caught(family: str, tmp_path: Path) -> None:
    p = next(p for p in catalog() if p.tested[0].instruction == family and not p.negative
             and (family != "tcgen05.mma" or p.tested[0].cols == 1)
             and (p.kind != "wgmma" or p.payload.pairs))  # a wgmma at its smallest N: every experiment
    dev = _deviation(p)
    raw = kinds.simulate(p, dev)
    assert "SIMULATED" in raw["device"]["name"] and dev.name in raw["device"]["name"]
    res = kinds.judge(p, observe.from_raw(raw, simulated=True))
    bent = [r for r in res if r.layout == dev.layout]
    assert bent and all(r.status == "contradicted" and not r.as_expected for r in bent), [r.message for r in bent]
    assert all(r.simulated and "SIMULATED" in r.message for r in res)
    # the same device, following the spec: every result as expected
    clean = kinds.judge(p, observe.from_raw(kinds.simulate(p), simulated=True))
    assert all(r.as_expected for r in clean), [r.message for r in clean if not r.as_expected]
    # and through an observation file, as check --observations reads it
    (tmp_path / "x.json").write_text(observe.dumps(kinds.record(p, observe.from_raw(raw, simulated=True), "0" * 64)))
    again = [r for r in kinds.check_observations(layouts(), tmp_path) if r.layout == dev.layout]
    assert again and all(not r.as_expected for r in again)


def test_wmma_maps_are_observed_never_doc_stated() -> None:
    """The doc leaves wmma maps unspecified: a run reports the map as observed (status ``observed``), compares
    only the counts the doc states, and the SIMULATED device says its map is a stand-in."""
    p = next(p for p in catalog() if p.id == "wmma.m16n16k16.f16.f32")
    res = kinds.judge(p, observe.from_raw(kinds.simulate(p), simulated=True))
    assert {r.status for r in res} == {"observed"} and all(r.expected == "observed" for r in res)
    assert all("unspecified" in r.message and "stand-in" in r.message for r in res)
    assert all(r.status != "confirmed" for r in res)
    f64 = next(p for p in catalog() if p.id == "wmma.m8n8k4.f64.f64")
    by = {r.layout: r for r in kinds.judge(f64, observe.from_raw(kinds.simulate(f64), simulated=True))}
    assert by["wmma.m8n8k4.C.f64"].status == "contradicted" and by["wmma.m8n8k4.C.f64"].as_expected  # the erratum
    assert by["wmma.m8n8k4.C.f64@corrected"].status == "observed"
