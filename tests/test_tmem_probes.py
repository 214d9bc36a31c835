"""Tensor Memory probes (verify/hardware/tmem_kind.py, the ``tmem`` kind): every Tensor Memory layout of the
catalog is probed or refused with a one-line reason; the programs assemble for sm_100a where nvcc is present;
the SIMULATED device (no GPU here) runs them through ``confirm`` and ``check --observations``, and a device
planted with a deviation is caught for every sub-kind.  Nothing here is evidence about hardware: every
observation is labelled SIMULATED."""
from __future__ import annotations

import functools
import json
import re
import struct
import subprocess
from pathlib import Path

import pytest

from verify import api
from verify.cli import main
from verify.hardware import kinds, observe, tmem_kind, tmem_readback
from verify.hardware.cuda import find_nvcc, find_ptxas
from verify.hardware.simdevice import Deviation

from assemble import assemble
from conftest import SPECS

NVCC = find_nvcc()
PTXAS = find_ptxas(NVCC)

PROBED = {"tcgen05.datapath.A", "tcgen05.datapath.B", "tcgen05.datapath.D", "tcgen05.datapath.E", "tcgen05.datapath.E@corrected", "tcgen05.datapath.F",
          "tcgen05.datapath.G", "tcgen05.packing.D.b16.unpacked", "tcgen05.packing.A.b16.packed",
          "tcgen05.packing.A.b16.unpacked", "tcgen05.packing.A.mxf8f6f4", "tcgen05.packing.A.mxf4",
          "tcgen05.sf.A.4x1", "tcgen05.sf.A.4x1.sfa_id0", "tcgen05.cp.32x128b.warpx4", "tcgen05.cp.source.32x128b",
          "tcgen05.datapath.C", "tcgen05.cp.128x256b", "tcgen05.cp.128x128b", "tcgen05.cp.4x256b",
          "tcgen05.cp.64x128b.warpx2.02_13", "tcgen05.cp.64x128b.warpx2.01_23"}
REFUSED = {"tcgen05.sf.B.4x1",  # the sf probe codes A's scale factors only (tmem_kind.why_not says so)
           "tcgen05.packing.A.b32"}  # the tmem_a probe has no kind::tf32 form (tmem_kind.why_not)


@functools.cache
def loaded():
    return api.load([SPECS])


@functools.cache
def catalog() -> tuple[tuple[kinds.Probe, ...], tuple[str, ...]]:
    found, errors = kinds.tmem_probes(api.map_layouts(loaded()))
    return tuple(found), tuple(errors)


def _probe(pid: str) -> kinds.Probe:
    return next(p for p in catalog()[0] if p.id == pid)


def test_every_tensor_memory_layout_is_probed_or_refused_with_a_reason() -> None:
    found, errors = catalog()
    tmem = {m.id for m in api.map_layouts(loaded()) if tmem_kind.takes(m)}
    assert tmem == PROBED | REFUSED
    assert {x.id for p in found for x in p.tested} == PROBED
    why = {e.partition("] ")[0][1:]: e.partition("] ")[2] for e in errors}
    assert sorted(why) == sorted(REFUSED)  # every other layout id is probed
    assert why["tcgen05.sf.B.4x1"].startswith("the scale factors of B: ")
    assert why["tcgen05.packing.A.b32"].startswith("the tmem_a probe runs no MMA form that reads A in this packing")
    assert {p.kind for p in found} == {"tmem"} and {p.arch for p in found} == {"sm_100a"}
    assert {p.payload.sub for p in found} == {"datapath", "pack_d", "st", "tmem_a", "sf", "cp"}
    assert len({p.id for p in found}) == len(found) == 26
    pair = {p.id: p.text for p in found if p.payload.plan.ctas == 2}
    assert pair == {"tmem.datapath.tcgen05.datapath.A.N=16": "tcgen05.mma.cta_group::2.kind::f16",
                    "tmem.datapath.tcgen05.datapath.B.N=32": "tcgen05.mma.cta_group::2.kind::f16",
                    "tmem.datapath.tcgen05.datapath.C.N=32,BASE=0": "tcgen05.mma.sp.cta_group::2.kind::f16",
                    "tmem.datapath.tcgen05.datapath.C.N=32,BASE=16": "tcgen05.mma.sp.cta_group::2.kind::f16"}
    # the members: smallest N of kind::f16, each lane alignment, each scale vector size
    assert _probe("tmem.datapath.tcgen05.datapath.F.N=16,BASE=16").tags == ("tcgen05.datapath.F@N=16,BASE=16",)
    assert [x.id for x in _probe("tmem.datapath.tcgen05.datapath.E.N=64").tested] == [
        "tcgen05.datapath.E@corrected", "tcgen05.datapath.E"]
    assert {p.id for p in found if p.payload.sub == "sf"} == {
        f"tmem.sf.tcgen05.sf.A.4x1{s}.VS={v}" for s in ("", ".sfa_id0") for v in (1, 2, 4)}


def test_the_predictions_are_the_layouts_own_cells() -> None:
    """Literal points of the spec formulas, as the probes expect to read them back."""
    a2 = _probe("tmem.datapath.tcgen05.datapath.A.N=16").payload  # lane key: CTA x 128 + lane
    assert a2.predicted[(128 + 5, 3)] == (128 + 5, 3) and a2.predicted[(5, 3)] == (5, 3)
    b2 = _probe("tmem.datapath.tcgen05.datapath.B.N=32").payload  # 2x2: the second half of N in lanes 64..127
    assert b2.predicted[(128 + 64 + 2, 1)] == (64 + 2, 16 + 1) and b2.predicted[(2, 1)] == (2, 1)
    d = _probe("tmem.datapath.tcgen05.datapath.D.N=16").payload
    assert d.predicted[(5, 3)] == (5, 3) and d.predicted[(5, 20)] is None  # N = 16: columns 16.. stay empty
    f = _probe("tmem.datapath.tcgen05.datapath.F.N=16,BASE=16").payload
    assert f.predicted[(16, 0)] == (0, 0) and f.predicted[(33 + 16, 2)] == (17, 2) and f.predicted[(0, 0)] is None
    g = _probe("tmem.datapath.tcgen05.datapath.G.N=64").payload
    assert g.predicted[(32 + 7, 1)] == (7, 16 + 1)  # 1x4: the second lane quarter holds columns 16..31
    e = dict(_probe("tmem.datapath.tcgen05.datapath.E.N=64").payload.predictions)
    assert e["tcgen05.datapath.E@corrected"][(64 + 3, 0)] == (3, 32)
    assert e["tcgen05.datapath.E"][(64 + 3, 0)] == (3, 21)  # the doc's N/3
    cp = _probe("tmem.cp.tcgen05.cp.32x128b.warpx4").payload
    assert cp.predicted[(32 + 1, 4)] == 1 * 16 + 4 and cp.predicted[(96 + 31, 15)] == 511  # copy 1, row 1, byte 4
    st = _probe("tmem.st.tcgen05.packing.A.b16.unpacked").payload
    assert st.predicted[(9, 10)] == (9, 10)
    a = _probe("tmem.tmem_a.tcgen05.packing.A.b16.packed").payload
    assert a.predicted[(9, 21)] == (9, 10, 1)
    sf = _probe("tmem.sf.tcgen05.sf.A.4x1.VS=2").payload
    assert sf.predicted[(40, 3)] == (40, 1, 3) and "SFA_IDs [0, 0, 2, 2]" in sf.how
    sf0 = _probe("tmem.sf.tcgen05.sf.A.4x1.sfa_id0.VS=2").payload
    assert sf0.predicted[(40, 3)] == (40, 1, 1) and "SFA_IDs [0, 0, 0, 0]" in sf0.how


def test_the_simulated_words_are_the_codes_the_program_writes() -> None:
    """What the decoder reads is what the kernel's codes make: D = m + 256 n in f32; byte codes of offsets."""
    p = _probe("tmem.datapath.tcgen05.datapath.D.N=16")
    out = tmem_readback.simulate(p.payload)
    rn = p.payload.plan.read[1]
    assert out[5 * rn + 3] == struct.unpack("<I", struct.pack("<f", 5.0 + 256 * 3))[0]
    assert out[5 * rn + 20] == 0xFFFFFFFF and len(out) == 128 * rn + 8192
    c = _probe("tmem.cp.tcgen05.cp.32x128b.warpx4")
    out = tmem_readback.simulate(c.payload)
    rn = c.payload.plan.read[1]
    word = [out[(e * 128 + 33) * rn + 1] for e in range(2)]  # lane 33, column 1 = bytes 4..7: offsets 20..23
    assert word == [0x17161514, 0x01010101]


def test_the_simulated_device_confirms_every_probe_and_the_erratum_shows() -> None:
    for p in catalog()[0]:
        raw = kinds.simulate(p)
        assert raw["simulated"] is True and raw["device"]["name"].startswith("SIMULATED")
        res = kinds.judge(p, observe.from_raw(raw, simulated=True))
        assert len(res) == len(p.tested) and all(r.as_expected and r.simulated for r in res), p.id
        assert all(r.message.startswith("SIMULATED: ") for r in res)
    e = kinds.judge(p := _probe("tmem.datapath.tcgen05.datapath.E.N=64"),
                    observe.from_raw(kinds.simulate(p), simulated=True))
    assert [(r.layout, r.status, r.expected) for r in e] == [
        ("tcgen05.datapath.E@corrected", "confirmed", "confirmed"), ("tcgen05.datapath.E", "contradicted", "contradicted")]
    # what a GPU run that failed is reported against (confirm --device cuda's error path)
    assert [kinds.expected(p, x) for x in p.tested] == ["confirmed", "contradicted"]


DEVIANTS = [  # (probe, first key, second key): two TMEM lanes swapped (inverse probes) or two elements' cells
    ("tmem.datapath.tcgen05.datapath.D.N=16", (0, 0), (1, 0)),
    ("tmem.datapath.tcgen05.datapath.A.N=16", (3, 0), (128 + 3, 0)),  # the two CTAs' rows swapped
    ("tmem.datapath.tcgen05.datapath.B.N=32", (64, 0), (128 + 64, 0)),
    ("tmem.datapath.tcgen05.datapath.F.N=16,BASE=0", (0, 3), (32, 3)),
    ("tmem.datapath.tcgen05.datapath.G.N=64", (5, 0), (37, 0)),
    ("tmem.pack_d.tcgen05.packing.D.b16.unpacked", (7, 1), (8, 1)),
    ("tmem.st.tcgen05.packing.A.b16.unpacked", (0, 0), (0, 1)),
    ("tmem.tmem_a.tcgen05.packing.A.b16.packed", (3, 0), (3, 1)),
    ("tmem.tmem_a.tcgen05.packing.A.mxf8f6f4", (0, 4), (0, 5)),
    ("tmem.tmem_a.tcgen05.packing.A.mxf4", (127, 200), (126, 200)),
    ("tmem.sf.tcgen05.sf.A.4x1.VS=1", (0, 0), (0, 1)),
    ("tmem.sf.tcgen05.sf.A.4x1.VS=4", (31, 2), (32, 2)),
    ("tmem.cp.tcgen05.cp.32x128b.warpx4", (0, 0), (1, 0)),
    ("tmem.cp.tcgen05.cp.128x256b", (127, 31), (0, 31)),
    ("tmem.cp.tcgen05.cp.128x128b", (8, 0), (7, 0)),
    ("tmem.cp.tcgen05.cp.4x256b", (32, 5), (96, 5)),
    ("tmem.cp.tcgen05.cp.64x128b.warpx2.02_13", (63, 15), (64, 15)),
    ("tmem.cp.tcgen05.cp.64x128b.warpx2.01_23", (32, 0), (64, 0)),
]


@pytest.mark.slow
@pytest.mark.parametrize("pid, first, second", DEVIANTS)
def test_a_deviating_device_is_caught(pid: str, first: tuple[int, int], second: tuple[int, int], tmp_path: Path) -> None:
    p = _probe(pid)
    assert p.payload.predicted[first] != p.payload.predicted[second]
    lay = p.tested[0]
    dev = Deviation(lay.id, first, second)
    raw = kinds.simulate(p, dev)
    assert dev.name in raw["device"]["name"]
    res = kinds.judge(p, observe.from_raw(raw, simulated=True))
    bad = [r for r in res if r.layout == lay.id]
    assert [r.status for r in bad] == ["contradicted"] and not bad[0].as_expected
    assert len(bad[0].violations) == 2 and bad[0].counterexample["key"] == list(min(first, second))
    assert bad[0].message.startswith("SIMULATED: ")
    # through an observation file, as check --observations reads it
    (tmp_path / f"{p.id}.simulated.json").write_text(
        observe.dumps(kinds.record(p, observe.from_raw(raw, simulated=True), "0" * 64)))
    again = kinds.check_observations([], tmp_path, api.map_layouts(loaded()))
    assert (lay.id, "contradicted", False) in [(r.layout, r.status, r.as_expected) for r in again]


def test_a_column_offset_is_caught() -> None:
    """One element a column off (it lands where (0, 1) belongs, its own cell stays empty)."""
    p = _probe("tmem.datapath.tcgen05.datapath.D.N=16")
    raw = kinds.simulate(p, Deviation("tcgen05.datapath.D", (0, 1), (0, 0), mode="copy"))
    res = kinds.judge(p, observe.from_raw(raw, simulated=True))
    assert res[0].status == "contradicted"
    assert res[0].violations[0] == "TMEM lane 0, column 1: the device holds (0, 0), the layout puts (0, 1) there"


def test_an_unreadable_word_is_named_not_decoded() -> None:
    p = _probe("tmem.datapath.tcgen05.datapath.D.N=16")
    raw = kinds.simulate(p)
    raw["out"][0] = struct.unpack("<I", struct.pack("<f", 0.5))[0]
    res = kinds.judge(p, observe.from_raw(raw, simulated=True))
    assert res[0].status == "contradicted" and "holds 0x3f000000" in res[0].violations[0]


@pytest.mark.slow
def test_check_observations_cli_with_tmem_observations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    for name in ("tcgen05.datapath.toml", "tcgen05.scale_factors.toml"):
        (specs / name).write_text((SPECS / name).read_text())
    lo = api.load([str(specs)])
    obs = tmp_path / "obs"
    obs.mkdir()
    found = kinds.tmem_probes(api.map_layouts(lo))[0]
    assert {p.payload.sub for p in found} == {"datapath", "sf", "cp"}
    for p in found:
        doc = kinds.record(p, observe.from_raw(kinds.simulate(p), simulated=True), "0" * 64)
        assert doc["kind"] == "tmem" and doc["simulated"] is True and doc["decoded"]["tmem"]
        (obs / f"{p.id}.simulated.json").write_text(observe.dumps(doc))
    assert main(["check", str(specs), "--observations", str(obs), "--format", "json"]) == 0
    hw = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["check"] == "hardware"]
    assert len(hw) == sum(len(p.tested) for p in found) and all(f["as_expected"] and f["simulated"] for f in hw)
    p = next(p for p in found if p.id == "tmem.datapath.tcgen05.datapath.G.N=64")
    raw = kinds.simulate(p, Deviation("tcgen05.datapath.G", (0, 0), (1, 0)))
    (obs / f"{p.id}.simulated.json").write_text(
        observe.dumps(kinds.record(p, observe.from_raw(raw, simulated=True), "0" * 64)))
    assert main(["check", str(specs), "--observations", str(obs)]) == 1
    assert "TMEM lane 0, column 0: the device holds (1, 0), the layout puts (0, 0) there" in capsys.readouterr().out


def test_probe_cli_emits_tmem_programs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "tcgen05.datapath.E", "tcgen05.cp.source.32x128b", "--emit", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[tcgen05.datapath.E@corrected@N=64, tcgen05.datapath.E@N=64]" in out
    written = sorted(f.name for f in tmp_path.iterdir())
    assert written == ["README.md", "tmem.cp.tcgen05.cp.32x128b.warpx4.cu", "tmem.datapath.tcgen05.datapath.E.N=64.cu"]
    src = (tmp_path / "tmem.datapath.tcgen05.datapath.E.N=64.cu").read_text()
    assert "tcgen05.mma.ws.cta_group::1.kind::f16" in src and "int main()" in src and "tcgen05.ld.sync" in src


def test_probe_cli_emits_the_sparse_pair_program(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Layout C: tcgen05.mma.sp.cta_group::2 with its metadata operand, the metadata written into Tensor Memory
    by every thread of both CTAs (tcgen05.st of 0x44444444: every 4-group keeps elements 0 and 1), the sparse flag
    (bit 2) in the instruction descriptor, B's 32-value rows (SBO 512 bytes), D at lane BASE."""
    assert main(["probe", "tcgen05.datapath.C", "--emit", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    src = (tmp_path / "out" / "tmem.datapath.tcgen05.datapath.C.N=32,BASE=16.cu").read_text()
    for text in ("__cluster_dims__(2, 1, 1)", "tcgen05.alloc.cta_group::2", "tcgen05.mma.sp.cta_group::2.kind::f16 "
                 "[%0], %1, %2, [%5], %3, p;", '"r"(base + (16u << 16) + 64u)', "0x44444444u", "0x8080014u",
                 "((uint64_t)(512u >> 4) << 32)", '"r"(base + (16u << 16))'):
        assert text in src, text
    p = _probe("tmem.datapath.tcgen05.datapath.C.N=32,BASE=0").payload
    assert p.plan.fills == ((64, 64, 0x44444444),) and p.plan.read == (0, 64) and p.plan.cols == 128
    assert p.plan.smem_words == 64 * 16 // 2 + 16 * 32 // 2 and len(p.input) == 2 * p.plan.smem_words  # A, B per CTA


def test_the_sparse_pair_probe_says_whether_the_device_is_layout_c_or_layout_b() -> None:
    """The table's Layout C (half the lanes, 4x1) and CuTe's 2x2 (Layout B at N = 32) predict different cells;
    a device following either is named as such, a device following neither is said to."""
    for base in (0, 16):
        p = _probe(f"tmem.datapath.tcgen05.datapath.C.N=32,BASE={base}")
        c = p.payload.predicted
        assert c[(base + 32 + 3, 5)] == (16 + 3, 5) and c[(128 + base, 7)] == (64, 7)  # CTA 1 holds rows 64..127
        other, _what, b = p.payload.meta["alt"]
        assert other == "tcgen05.datapath.B@N=32"
        assert b[(base + 64 + 2, 1)] == (2, 16 + 1) and b[(128 + base + 2, 1)] == (64 + 2, 1)
        ok = kinds.judge(p, observe.from_raw(kinds.simulate(p), simulated=True))
        assert [(r.layout, r.status, r.as_expected) for r in ok] == [("tcgen05.datapath.C", "confirmed", True)]
        assert "; it is not tcgen05.datapath.B@N=32's placement (CuTe's 2x2 placement of the 2x1SM sparse MMA)" \
            in ok[0].message
        dev = tmem_kind.placed_as(p.payload)
        raw = kinds.simulate(p, dev)
        assert "places every cell as tcgen05.datapath.B@N=32" in raw["device"]["name"]
        bad = kinds.judge(p, observe.from_raw(raw, simulated=True))
        assert bad[0].status == "contradicted" and not bad[0].as_expected
        assert bad[0].message.endswith("; every cell read back is where tcgen05.datapath.B@N=32 (CuTe's 2x2 "
                                       "placement of the 2x1SM sparse MMA) puts it: the device follows "
                                       "tcgen05.datapath.B@N=32")
        swap = kinds.judge(p, observe.from_raw(kinds.simulate(p, Deviation("tcgen05.datapath.C", (base, 0), (base, 1))),
                                               simulated=True))
        assert swap[0].status == "contradicted" and "it is not tcgen05.datapath.B@N=32's placement" in swap[0].message


@pytest.mark.slow
def test_check_observations_with_a_recorded_layout_b_device(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A recorded (SIMULATED) observation of a device placing D as Layout B: ``check --observations`` reports
    Layout C contradicted and names Layout B; the spec-following record is confirmed."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "tcgen05.datapath.toml").write_text((SPECS / "tcgen05.datapath.toml").read_text())
    lo = api.load([str(specs)])
    obs = tmp_path / "obs"
    obs.mkdir()
    pid = "tmem.datapath.tcgen05.datapath.C.N=32,BASE=0"
    p = next(p for p in kinds.tmem_probes(api.map_layouts(lo))[0] if p.id == pid)
    doc = kinds.record(p, observe.from_raw(kinds.simulate(p), simulated=True), "0" * 64)
    (obs / f"{p.id}.simulated.json").write_text(observe.dumps(doc))
    assert main(["check", str(specs), "--observations", str(obs), "--format", "json"]) == 0
    hw = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["check"] == "hardware"]
    assert [(f["layout"], f["as_expected"]) for f in hw] == [("tcgen05.datapath.C", True)]
    raw = kinds.simulate(p, tmem_kind.placed_as(p.payload))
    (obs / f"{p.id}.simulated.json").write_text(
        observe.dumps(kinds.record(p, observe.from_raw(raw, simulated=True), "0" * 64)))
    assert main(["check", str(specs), "--observations", str(obs)]) == 1
    out = capsys.readouterr().out
    assert "the device follows tcgen05.datapath.B@N=32" in out and "tcgen05.datapath.C" in out


def test_a_pair_probe_runs_as_a_cluster_of_two() -> None:
    """The 2-CTA program: one cluster of two blocks, a collective allocation, the even CTA's MMA, a multicast
    commit to both CTAs' barriers; each CTA reads its own Tensor Memory back."""
    src = kinds.program(_probe("tmem.datapath.tcgen05.datapath.B.N=32"))
    for text in ("__cluster_dims__(2, 1, 1)", "<<<2, threads>>>", "tcgen05.alloc.cta_group::2",
                 "if (cta == 0 && t == 0)", "multicast::cluster", "barrier.cluster.wait", "tcgen05.dealloc.cta_group::2"):
        assert text in src, text
    one = kinds.program(_probe("tmem.datapath.tcgen05.datapath.D.N=16"))
    assert "<<<1, threads>>>" in one and "__cluster_dims__" not in one and "cta_group::2" not in one


def test_confirm_simulated_runs_tmem_layouts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["confirm", "tcgen05.datapath.E", "tcgen05.sf.A.4x1", "--device", "simulated"]) == 0
    out = capsys.readouterr().out.splitlines()
    hw = [ln for ln in out if "hardware:" in ln]
    assert len(hw) == 5 and all("SIMULATED hardware:" in ln for ln in hw)
    assert out[0].startswith("SIMULATED device")
    assert out[-1] == ("SIMULATED: 5 layout results: 4 confirmed, 0 observed (wmma: the doc states no map), "
                       "1 contradicted (1 known errata), 0 unexpected")


def _sm100a() -> str:
    if not (NVCC and PTXAS):
        return "nvcc/ptxas not found: the tmem programs are not assembled"
    archs = subprocess.run([NVCC, "--list-gpu-arch"], capture_output=True, text=True).stdout
    return "" if re.search(r"compute_100\b", archs) else "this nvcc has no sm_100 target"


@pytest.mark.slow
@pytest.mark.skipif(bool(_sm100a()), reason=_sm100a() or "-")
def test_every_tmem_program_assembles_for_sm_100a(tmp_path: Path) -> None:
    """Every emitted program, all in one translation unit (as ``confirm --device cuda`` builds them), through
    ``nvcc -arch=sm_100a -ptx`` and ``ptxas -arch=sm_100a``; each instruction under test reaches the PTX."""
    found = catalog()[0]
    rc, err, text = assemble(found, "sm_100a", tmp_path / "tmem.cu")
    assert rc == 0, err
    for p in found:
        assert p.text in text, p.id
    assert text.count(".entry probe_tmem_") == len(found)
    sparse = [p.id for p in found if p.text.startswith("tcgen05.mma.sp.")]  # Layout C's, both lane alignments
    assert sparse == ["tmem.datapath.tcgen05.datapath.C.N=32,BASE=0", "tmem.datapath.tcgen05.datapath.C.N=32,BASE=16"]


CP_SHAPES = {  # probe id -> (PTX text, source block bytes, SBO)
    "tmem.cp.tcgen05.cp.32x128b.warpx4": ("tcgen05.cp.cta_group::1.32x128b.warpx4", 512, 128),
    "tmem.cp.tcgen05.cp.128x256b": ("tcgen05.cp.cta_group::1.128x256b", 4096, 256),
    "tmem.cp.tcgen05.cp.128x128b": ("tcgen05.cp.cta_group::1.128x128b", 2048, 128),
    "tmem.cp.tcgen05.cp.4x256b": ("tcgen05.cp.cta_group::1.4x256b", 256, 256),
    "tmem.cp.tcgen05.cp.64x128b.warpx2.02_13": ("tcgen05.cp.cta_group::1.64x128b.warpx2::02_13", 1024, 128),
    "tmem.cp.tcgen05.cp.64x128b.warpx2.01_23": ("tcgen05.cp.cta_group::1.64x128b.warpx2::01_23", 1024, 128),
}


def test_every_copy_shape_has_a_probe_of_its_block() -> None:
    """One probe per tcgen05.cp shape: the instruction its id names, the coded block (two experiments), 8 columns
    of every lane read back; the prediction is the copy layout composed with the source block (K-major core
    matrices, LBO 128: row r at 16 (r % 8) + SBO (r / 8), its second 16 bytes 128 further)."""
    found = {p.id: p for p in catalog()[0] if p.payload.sub == "cp"}
    assert sorted(found) == sorted(CP_SHAPES)
    for pid, (text, span, sbo) in CP_SHAPES.items():
        t = found[pid].payload
        assert t.text == text and t.plan.read == (0, 8) and t.plan.cols == 32 and t.plan.experiments == 2
        assert t.plan.smem_words == span // 4 and len(t.input) == span // 2 and t.meta["span"] == span
        assert f"((uint64_t)({sbo}u >> 4) << 32)" in t.plan.setup and "((uint64_t)(128u >> 4) << 16)" in t.plan.setup
        offs = [off for off in t.predicted.values() if off is not None]  # every byte copied once per multicast copy
        copies = 4 if "warpx4" in pid else 2 if "warpx2" in pid else 1
        rows, row_bytes = (4, 32) if "4x256b" in pid else (span // 16 if sbo == 128 else span // 32, sbo // 8)
        assert len(set(offs)) == rows * row_bytes and len(offs) == copies * rows * row_bytes, pid
    w = found["tmem.cp.tcgen05.cp.128x256b"].payload.predicted
    assert w[(9, 0)] == 256 + 16 and w[(9, 16)] == 256 + 16 + 128 and w[(127, 31)] == 15 * 256 + 128 + 7 * 16 + 15
    assert sum(v is not None for v in w.values()) == 128 * 32
    n = found["tmem.cp.tcgen05.cp.128x128b"].payload.predicted
    assert n[(9, 15)] == 128 + 16 + 15 and n[(9, 16)] is None  # 4 columns written: bytes 16.. keep the sentinel
    f = found["tmem.cp.tcgen05.cp.4x256b"].payload.predicted
    assert f[(64, 20)] == 128 + 2 * 16 + 4 and f[(65, 0)] is None and sum(v is not None for v in f.values()) == 4 * 32
    a = found["tmem.cp.tcgen05.cp.64x128b.warpx2.02_13"].payload.predicted
    b = found["tmem.cp.tcgen05.cp.64x128b.warpx2.01_23"].payload.predicted
    # source row 32 (offset 512): ::02_13 (CuTe) lanes 32 and 96, ::01_23 (CuTe) lanes 64 and 96
    assert a[(32, 0)] == a[(96, 0)] == 512 and b[(64, 0)] == b[(96, 0)] == 512 and b[(32, 0)] == 0


def test_the_01_23_probe_names_mosaics_reading() -> None:
    """The ::01_23 probe compares the device with Mosaic GPU's reading (the spec's ::02_13) as well: a device
    following the spec is confirmed and said not to be Mosaic's; a device planted with ::02_13's placement (lane
    quarters 1 and 2 swapped) is contradicted at the first wrong cell, and said to follow ::02_13."""
    p = _probe("tmem.cp.tcgen05.cp.64x128b.warpx2.01_23")
    other, _what, cells = p.payload.meta["alt"]
    assert other == "tcgen05.cp.64x128b.warpx2.02_13"
    assert cells == _probe("tmem.cp.tcgen05.cp.64x128b.warpx2.02_13").payload.predicted
    ok = kinds.judge(p, observe.from_raw(kinds.simulate(p), simulated=True))
    assert [(r.layout, r.status, r.as_expected) for r in ok] == [("tcgen05.cp.64x128b.warpx2.01_23", "confirmed", True)]
    assert ("it is not tcgen05.cp.64x128b.warpx2.02_13's placement (JAX Mosaic GPU's reading of ::01_23, the "
            "spec's ::02_13): 1024 cells differ from it, first TMEM lane 32, byte 0: the device holds 0, "
            "tcgen05.cp.64x128b.warpx2.02_13 puts 512 there") in ok[0].message
    raw = kinds.simulate(p, tmem_kind.placed_as(p.payload))
    assert raw["simulated"] is True and "places every cell as tcgen05.cp.64x128b.warpx2.02_13" in raw["device"]["name"]
    bad = kinds.judge(p, observe.from_raw(raw, simulated=True))
    assert bad[0].status == "contradicted" and not bad[0].as_expected and bad[0].message.startswith("SIMULATED: ")
    assert bad[0].violations[0] == "TMEM lane 32, byte 0: the device holds 512, the layout puts 0 there"
    assert bad[0].counterexample["key"] == [32, 0]
    assert bad[0].message.endswith("; every cell read back is where tcgen05.cp.64x128b.warpx2.02_13 (JAX Mosaic GPU's "
                                   "reading of ::01_23, the spec's ::02_13) puts it: the device follows "
                                   "tcgen05.cp.64x128b.warpx2.02_13")


def test_the_01_23_probe_without_its_peer_says_so() -> None:
    lay = next(m for m in api.map_layouts(loaded()) if m.id == "tcgen05.cp.64x128b.warpx2.01_23")
    found, errors = kinds.tmem_probes([lay])
    assert not errors and "alt" not in found[0].payload.meta
    assert found[0].payload.how.endswith("(tcgen05.cp.64x128b.warpx2.02_13 not loaded: no comparison with JAX Mosaic "
                                         "GPU's reading of ::01_23, the spec's ::02_13)")


def test_probe_cli_emits_the_settling_01_23_program(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "tcgen05.cp.64x128b.warpx2.01_23", "--emit", str(tmp_path)]) == 0
    capsys.readouterr()
    src = (tmp_path / "tmem.cp.tcgen05.cp.64x128b.warpx2.01_23.cu").read_text()
    for text in ('asm volatile("tcgen05.cp.cta_group::1.64x128b.warpx2::01_23 [%0], %1;"', "tcgen05.alloc.cta_group::1",
                 "tcgen05.ld.sync.aligned.32x32b.x1.b32", "0xffffffffu", "int main()"):
        assert text in src, text
