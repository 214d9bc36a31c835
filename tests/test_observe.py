"""Observation pipeline: relations from raw D, comparison with specs, simulated device, files, CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verify.hardware import explain, kinds, observe, probes, simdevice as sd
from verify.hardware.cuda import cuda_devices
from verify.catalog.spec import load_spec_text

ROOT = Path(__file__).resolve().parent.parent

M16N8K16 = """
schema = 1
[source]
section = "9.7.14.5.8"
[instruction]
name = "mma"
shape = "m16n8k16"
arch = "sm_80"
[[fragment]]
operand = "A"
types = ["f16"]
registers = 4
register_type = "f16x2"
elements_per_register = 2
formula = '''
groupID = %laneid >> 2
threadID_in_group = %laneid % 4
row = groupID for ai where 0 <= i < 2 || 4 <= i < 6
      groupID + 8 Otherwise
col = (threadID_in_group * 2) + (i & 0x1) for ai where i < 4
      (threadID_in_group * 2) + (i & 0x1) + 8 for ai where i >= 4
'''
[[fragment]]
operand = "B"
types = ["f16"]
registers = 2
register_type = "f16x2"
elements_per_register = 2
formula = '''
groupID = %laneid >> 2
threadID_in_group = %laneid % 4
row = (threadID_in_group * 2) + (i & 0x1) for bi where i < 2
      (threadID_in_group * 2) + (i & 0x1) + 8 for bi where i >= 2
col = groupID
'''
[[fragment]]
operand = "C"
types = ["f32"]
registers = 4
register_type = "f32"
elements_per_register = 1
formula = '''
groupID = %laneid >> 2
threadID_in_group = %laneid % 4
row = groupID for ci where i < 2
      groupID + 8 for ci where i >= 2
col = (threadID_in_group * 2) + (i & 0x1) for ci where i = {0,..,3}
'''
"""

M8N8K4 = """
schema = 1
[source]
section = "9.7.14.5.1"
[instruction]
name = "mma"
shape = "m8n8k4"
arch = "sm_70"
groups = 4
group = "(%laneid >> 2) % 4"
[[fragment]]
operand = "A"
types = ["f16"]
variant = "row"
registers = 2
register_type = "f16x2"
elements_per_register = 2
formula = '''
row =            %laneid % 4          if %laneid < 16
                (%laneid % 4) + 4     otherwise
col =            i                    for ai where i = {0,..,3}
'''
[[fragment]]
operand = "B"
types = ["f16"]
variant = "col"
registers = 2
register_type = "f16x2"
elements_per_register = 2
formula = '''
row =       i                 for bi   where i = {0,..,3}
col =      %laneid % 4        if %laneid < 16
          (%laneid % 4) + 4   otherwise
'''
[[fragment]]
operand = "C"
types = ["f32"]
registers = 8
register_type = "f32"
elements_per_register = 1
formula = '''
row =     X           if %laneid < 16
        X + 4         otherwise
          where X = (%laneid & 0b1) + (i & 0b10)  for ci where i = {0,..,7}
col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1)  for ci where i = {0,..,7}
'''
"""


def _ins(text: str) -> probes.Instruction:
    found = probes.instructions(load_spec_text(text, "<test>").layouts)
    assert len(found) == 1
    return found[0]


@pytest.fixture(scope="module")
def dense() -> probes.Instruction:
    return _ins(M16N8K16)


@pytest.fixture(scope="module")
def m884() -> probes.Instruction:
    return _ins(M8N8K4)


def _run(ins: probes.Instruction, model: sd.DeviceModel | None = None) -> dict[str, observe.HardwareResult]:
    obs = observe.from_raw(sd.run(ins, model), simulated=True)
    return {r.layout.split(".")[2]: r for r in explain.compare(ins, obs)}


def test_instruction_text(dense: probes.Instruction, m884: probes.Instruction) -> None:
    assert dense.text == "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    assert m884.text == "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32"
    assert dense.plan.total == 256 + 128 + 256 * 128 + 128


def test_relations_read_only_raw_data(dense: probes.Instruction) -> None:
    """Relations of the simulated device are the matrix product's, not copied from the spec."""
    obs = observe.from_raw(sd.run(dense), simulated=True)
    rel = observe.relations(dense, obs)
    # lane 5 element a3 is row 9 (groupID 1 + 8): it reaches c2, c3 of lanes 4..7
    assert rel.rows[0][(5, 3)] == {(lane, i) for lane in range(4, 8) for i in (2, 3)}
    # lane 0 b0 is column 0: c0 and c2 of lanes 0, 4, ..., 28 (threadID_in_group 0)
    assert rel.cols[0][(0, 0)] == {(lane, i) for lane in range(0, 32, 4) for i in (0, 2)}
    assert rel.c_to_d[(9, 2)] == {(9, 2)}
    # each A element meets exactly N = 8 B elements
    assert all(len(v) == 8 for v in rel.meets[0].values())


def test_dense_follows_spec_confirmed(dense: probes.Instruction) -> None:
    res = _run(dense)
    assert {k: r.status for k, r in res.items()} == {"A": "confirmed", "B": "confirmed", "C": "confirmed"}
    for r in res.values():
        assert r.simulated and "SIMULATED" in r.message and "SIMULATED" in r.gpu
        assert r.to_json()["simulated"] is True


def test_dense_swapped_a_elements(dense: probes.Instruction) -> None:
    model = sd.swap_elements(sd.model_from_instruction(dense), "A", (5, 1), (5, 2))
    res = _run(dense, model)
    assert res["A"].status == "contradicted"
    assert res["B"].status == res["C"].status == "confirmed"
    assert res["A"].counterexample.to_json() == {"relation": "row", "lane": 5, "i": 1, "element": "a1", "spec_row": 1,
                                       "reaches": sorted([ln, i] for ln in range(4, 8) for i in (2, 3))}
    assert "lane 5 element a1 (row 1 per the spec)" in res["A"].message


def test_dense_b_same_column_other_k(dense: probes.Instruction) -> None:
    """b0 and b2 of lane 0 share column 0; swapping them changes only k."""
    res = _run(dense, sd.swap_elements(sd.model_from_instruction(dense), "B", (0, 0), (0, 2)))
    assert res["A"].status == "confirmed" and res["C"].status == "confirmed"
    assert res["B"].status == "contradicted"
    assert res["B"].counterexample["relation"] == "k"
    assert "lane 0 element b2" in res["B"].message


def test_dense_c_swap_is_c_to_d_witness(dense: probes.Instruction) -> None:
    res = _run(dense, sd.swap_elements(sd.model_from_instruction(dense), "C", (9, 0), (9, 3)))
    assert res["C"].status == "contradicted"
    # C and D move together, so C -> D is still the identity; the row/column classes break
    assert res["C"].counterexample["relation"] in ("row", "column")
    assert "lane 9" in res["C"].message


def test_dense_shifted_c_row(dense: probes.Instruction) -> None:
    res = _run(dense, sd.shift_row(sd.model_from_instruction(dense), "C", (9, 2), 1))
    assert res["C"].status == "contradicted"
    assert res["C"].counterexample.to_json() == {"relation": "c_to_d", "lane": 9, "i": 2, "element": "c2",
                                       "arrives": [[9, 2], [13, 2]]}
    assert "also contradicted in this run" in res["A"].message


def test_m8n8k4_follows_spec_confirmed(m884: probes.Instruction) -> None:
    assert m884.groups == 4
    res = _run(m884)
    assert all(r.status == "confirmed" for r in res.values())


def test_m8n8k4_lane_group_swap(m884: probes.Instruction) -> None:
    """Lanes 4 and 20 are the low and high half of MMA computation 1."""
    res = _run(m884, sd.swap_elements(sd.model_from_instruction(m884), "A", (4, 0), (20, 0)))
    assert res["A"].status == "contradicted"
    assert res["B"].status == res["C"].status == "confirmed"
    cex = res["A"].counterexample
    assert (cex["lane"], cex["element"], cex["spec_row"]) == (4, "a0", 0)
    assert [20, 0] in cex["reaches"]


def test_m8n8k4_cross_group_is_caught(m884: probes.Instruction) -> None:
    """An element that lands in another MMA computation's D is a contradiction."""
    res = _run(m884, sd.swap_elements(sd.model_from_instruction(m884), "B", (0, 1), (4, 1)))
    assert res["B"].status == "contradicted"
    assert res["A"].status == "confirmed"


@pytest.mark.parametrize("name", ["mma.sp.m16n8k32.u8_s8.toml", "mma.sp.m16n8k16.tf32.toml"])
def test_sparse_follows_spec_confirmed(name: str) -> None:
    path = ROOT / "specs" / name
    if not path.exists():
        pytest.skip(f"{name} not in specs/")
    inss = probes.instructions(load_spec_text(path.read_text(), str(path)).layouts)
    ins = inss[0]
    assert ins.sparse and len(ins.plan.metadata) == 2
    obs = observe.from_raw(sd.run(ins), simulated=True)
    for r in explain.compare(ins, obs):
        # the doc's tf32 B says 4 x 4 registers: the instruction's registers contradict it
        want = "contradicted" if r.layout == "mma.sp.m16n8k16.B.tf32" else "confirmed"
        assert r.status == want, r.message


def test_sparse_metadata_matters() -> None:
    path = ROOT / "specs" / "mma.sp.m16n8k32.u8_s8.toml"
    if not path.exists():
        pytest.skip("sparse spec not in specs/")
    ins = probes.instructions(load_spec_text(path.read_text(), str(path)).layouts)[0]
    base = sd.model_from_instruction(ins)
    # a device that ignores the metadata (always keeps positions 0, 1) contradicts A's k classes
    bent = sd.DeviceModel(lambda ln, i, m: base.a(ln, i, 0x4), base.b, base.c, "ignores metadata")
    res = {r.layout: r for r in explain.compare(ins, observe.from_raw(sd.run(ins, bent), simulated=True))}
    a = res["mma.sp.m16n8k32.A.u8_s8"]
    assert a.status == "contradicted"
    assert a.counterexample["relation"] == "k-pairing" and a.counterexample["metadata"] == "0xeeeeeeee"
    assert res["mma.sp.m16n8k32.u8.C.s32"].status == "confirmed"


def test_observation_file_roundtrip(dense: probes.Instruction, tmp_path: Path) -> None:
    obs = observe.from_raw(sd.run(dense), simulated=True)
    rel = observe.relations(dense, obs)
    doc = observe.observation_json(dense, obs, rel, probes.source_sha256(probes.probe_source(dense)))
    assert doc["simulated"] is True and doc["ptx"] == dense.text and len(doc["probe_sha256"]) == 64
    text = observe.dumps(doc)
    assert text == observe.dumps(json.loads(text))  # sorted keys, deterministic
    f = tmp_path / f"{dense.id}.{observe.gpu_slug('SIMULATED test')}.json"
    f.write_text(text)
    res = kinds.check_observations(load_spec_text(M16N8K16, "<t>").layouts, tmp_path)
    assert [r.status for r in res] == ["confirmed"] * 3
    assert all(r.simulated and "SIMULATED" in r.message for r in res)
    assert res[0].as_expected and res[0].check == "hardware"


def test_observation_mismatch_is_bad_input(dense: probes.Instruction, m884: probes.Instruction) -> None:
    obs = observe.from_raw(sd.run(m884), simulated=True)
    with pytest.raises(observe.ObservationError):
        observe.relations(dense, obs)
    with pytest.raises(observe.ObservationError):
        observe.from_raw({"records": []}, simulated=False)


def test_bad_observation_file(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(observe.ObservationError) as e:
        kinds.check_observations([], tmp_path)
    assert "x.json" in e.value.one_line()


def test_gpu_slug() -> None:
    assert observe.gpu_slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"


def test_decode() -> None:
    assert observe.decode("f16", 0x3C00) == 1.0
    assert observe.decode("f32", 0x3F800000) == 1.0
    assert observe.decode("s32", 0xFFFFFFFF) == -1.0
    assert observe.decode("f32", 0x80000000) == 0.0  # -0.0 counts as zero


def test_cli_confirm_without_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if cuda_devices()[0]:
        pytest.skip("a GPU is present")
    from verify.cli import main
    out = tmp_path / "obs"
    assert main(["confirm", "mma.m8n8k16.A.u8_s8", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no CUDA GPU" in err[0]
    assert not out.exists()


def test_cli_confirm_simulated_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from verify.cli import main
    out = tmp_path / "obs"
    assert main(["confirm", "mma.m8n8k16.A.u8_s8", "--device", "simulated", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "SIMULATED" in text and "contradicted" in text and not out.exists()


def test_cli_bad_id(capsys: pytest.CaptureFixture[str]) -> None:
    from verify.cli import main
    assert main(["confirm", "no-such-layout", "--device", "simulated"]) == 2
    assert main(["probe", "no-such-layout", "--emit", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(ln.startswith("ptx-verify: error:") for ln in err)


@pytest.mark.parametrize("fmt", ["sarif", "junit", "json", "text"])
def test_a_contradicted_observation_is_rendered_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               fmt: str) -> None:
    """A hardware finding's counterexample is a witness like every finding's: SARIF and JUnit render it (they
    raised AttributeError on its plain dict), JSON keeps its fields as they were."""
    from verify.cli import main
    path = ROOT / "specs" / "mma.sp.m16n8k32.u8_s8.toml"
    ins = probes.instructions(load_spec_text(path.read_text(), str(path)).layouts)[0]
    base = sd.model_from_instruction(ins)
    bent = sd.DeviceModel(lambda ln, i, m: base.a(ln, i, 0x4), base.b, base.c, "ignores metadata")
    obs = observe.from_raw(sd.run(ins, bent), simulated=True)
    doc = observe.observation_json(ins, obs, observe.relations(ins, obs), probes.source_sha256(probes.probe_source(ins)))
    (tmp_path / f"{ins.id}.{observe.gpu_slug('SIMULATED test')}.json").write_text(observe.dumps(doc))
    rc = main(["check", str(path), "--observations", str(tmp_path), "--format", fmt])
    out, err = capsys.readouterr()
    assert rc == 1 and err == "", (rc, err[-300:])
    assert ("hardware:CONTRADICTED" in out and "paired wrongly" in out) if fmt == "text" else "k-pairing" in out
    if fmt == "json":
        hw = [f for f in json.loads(out)["findings"] if f["check"] == "hardware" and f["status"] == "contradicted"]
        assert hw and hw[0]["counterexample"]["relation"] == "k-pairing"
