"""The Python API that proof scripts import."""
from __future__ import annotations

import subprocess
import sys

import z3

from verify import api

from conftest import ROOT, SPECS


def test_load_find_evaluate():
    specs = api.load([SPECS / "mma.m16n8k16.float.toml"])
    lay = api.layout(specs, "mma.m16n8k16.A.f16_bf16")
    assert lay.evaluate(5, 3) == (9, 3)
    assert api.layout(specs, "A.f16_bf16").id == lay.id  # unique substring
    res = api.check(lay)
    assert res.bijective and res.as_expected


def test_loads_from_string_and_layout_from_formula():
    lay = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 2 + i", operand="C",
                                  rows=8, cols=8, elements=2, types=("f16",), registers=1)
    assert api.check(lay).bijective
    spec = api.loads((SPECS / "mma.m8n8k16.toml").read_text())
    assert [x.operand for x in spec.layouts] == ["A", "B", "C"]


def test_prove_and_refute():
    lane, i = api.variables("lane i")
    assert api.prove((lane >> 2) * 4 + (lane & 3) == lane, assuming=[lane >= 0, lane < 32]).status == "proved"
    p = api.prove(lane < 16, assuming=[lane >= 0, lane < 32])
    assert p.status == "refuted" and p.counterexample["lane"] >= 16


def test_readme_proof_script_runs():
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "same_row_lane_group.py")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "same lane group: proved" in r.stdout


def test_symbolic_cell_matches_evaluation():
    lay = api.layout(api.load([SPECS / "mma.m8n8k4.f16.toml"]), "mma.m8n8k4.f16.C.f32")
    lane, i = api.variables("lane i")
    ok, row, col = api.cell(lay, lane, i)
    for ln, ix in [(0, 0), (17, 6), (31, 7)]:
        s = z3.Solver()
        s.add(lane == ln, i == ix)
        assert s.check() == z3.sat
        m = s.model()
        assert (m.eval(row).as_signed_long(), m.eval(col).as_signed_long()) == lay.evaluate(ln, ix)
