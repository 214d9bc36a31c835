"""Hardening U14: ``confirm`` judges a known erratum as ``check`` does.

A doc layout whose spec records a ``@corrected`` layout that a probe can tell apart from it is expected
``contradicted`` (the hardware does the correction); a corrected layout, and a doc layout whose erratum is
in its words only (an element list), are expected ``confirmed``.  Exit 0 when every result is as expected."""
from __future__ import annotations

import functools

import pytest

from verify import api
from verify.cli import main
from verify.hardware import explain, kinds, observe
from verify.hardware import simdevice as sd

from conftest import SPECS


@functools.cache
def _layouts() -> dict:
    return {lay.id: lay for lay in api.layouts(api.load([SPECS]))}


@pytest.mark.parametrize("lid, want", [
    ("mma.m16n8k256.A.b1", "contradicted"),            # the map: a32..a63 collide
    ("mma.m16n8k256.A.b1@corrected", "confirmed"),
    ("mma.sp.m16n8k16.B.tf32", "contradicted"),        # the register count: 4 x 4 for 2 x 2
    ("mma.m16n8k16.B.e4m3_e5m2", "confirmed"),         # 'b0, b1. b2. b3': the words only
    ("wgmma.m64nNk16.D.f32", "confirmed"),             # the element list at N = 8: the words only
    ("mma.m16n8k16.B.u8_s8", "confirmed"),             # no erratum
])
def test_expected_status(lid: str, want: str) -> None:
    lays = _layouts()
    assert explain.expected_status(lays[lid], lays.values()) == want


def test_confirm_simulated_accepts_the_known_errata(capsys: pytest.CaptureFixture[str]) -> None:
    """Before U14 this exited 1: the doc layouts of known errata counted as failures."""
    assert main(["confirm", "mma.m16n8k256.A.b1", "mma.sp.m16n8k16.B.tf32", "--device", "simulated"]) == 0
    out = capsys.readouterr().out
    assert out.count("(known erratum)") == 2 and "UNEXPECTED" not in out
    assert "2 contradicted (2 known errata), 0 unexpected" in out


def test_a_corrected_layout_contradicted_is_unexpected() -> None:
    """A device that deviates from a corrected layout: that result is not as expected (exit 1 in the CLI)."""
    lays = list(_layouts().values())
    ins = kinds.probes_for(lays, ["mma.m16n8k256.A.b1"])[0].payload
    model = sd.swap_elements(sd.model_from_instruction(ins), "A", (0, 0), (0, 33))
    res = {r.layout: r for r in explain.compare(ins, observe.from_raw(sd.run(ins, model), simulated=True))}
    fixed = res["mma.m16n8k256.A.b1@corrected"]
    assert fixed.status == "contradicted" and fixed.expected == "confirmed" and not fixed.as_expected
    assert "UNEXPECTED" in fixed.text_line()
    doc = res["mma.m16n8k256.A.b1"]
    assert doc.status == "contradicted" and doc.as_expected and "(known erratum)" in doc.text_line()
