"""The tinygrad reference (``references.tinygrad``): its tensor-core emulator's fragments, read with ``ast``.

Tested on a small emulator file written here (the CUDA case of ``ops_python.py``: agreeing, one coefficient
changed giving ``differ`` at its line, a construct outside the subset ``malformed``), and on the installed
tinygrad where it is (``pip install tinygrad==0.14.0``; skipped otherwise).
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import NAMES, ORIGINS, reference
from verify.checks.references import tinygrad as tg

EMULATOR = '''\
def run(u, device, dims, dtype_in, wmma_helper):
    if device == "METAL":
        def c_map(lane, elem): return (elem, lane)
    elif device == "CUDA":
        # (col, row) given (lane, elem) for C & D
        def c_map(lane, elem): return (elem%2 + (lane%4)*2, lane//4 + (elem//2)*8)

        if dims == (8,16,16):
            def a_elem(x, k, row, goff): return x[k%2 + (row//8)*2 + (k//8)*4][goff + (k//2)%4 + (row%8)*4]
            def b_elem(x, col, k, goff): return x[k%2 + (k//8)*2][goff + (k//2)%4 + col*4]
            values = wmma_helper(32, 16, 8, 4, 4, a_elem, b_elem, c_map)
        elif dims == (8,16,8) and dtype_in == dtypes.float:
            def a_elem(x, k, row, goff): return x[(k//4)*2 + row//8][goff + k%4 + (row%8)*4]
            def b_elem(x, col, k, goff): return x[k//4][goff + k%4 + col*4]
            values = wmma_helper(32, 8, 4, 2, 4, a_elem, b_elem, c_map)
        else: raise NotImplementedError(u)
'''


@functools.cache
def spec_layouts() -> list:
    return api.layouts(api.load(SPECS))


def write(tmp_path: Path, text: str = EMULATOR) -> Path:
    p = tmp_path / tg.FILE
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return tmp_path


def rows(root: Path) -> dict[str, object]:
    return {r.spec: r for r in tg.evaluate_default(spec_layouts(), path=root).rows}


def test_written_emulator_agrees(tmp_path: Path) -> None:
    got = rows(write(tmp_path))
    assert sorted(got) == ["mma.m16n8k16.A.f16_bf16", "mma.m16n8k16.B.f16_bf16", "mma.m16n8k16.float.C.f16",
                           "mma.m16n8k16.float.C.f32", "mma.m16n8k8.A.tf32", "mma.m16n8k8.B.tf32", "mma.m16n8k8.C.f32"]
    assert all(r.kind == "agree" for r in got.values())


def test_one_coefficient_changed_differs_at_its_line(tmp_path: Path) -> None:
    got = rows(write(tmp_path, EMULATOR.replace("goff + k%4 + (row%8)*4]", "goff + k%4 + (row%8)*2]")))
    bad = got["mma.m16n8k8.A.tf32"]
    assert bad.kind in ("differ", "malformed") and bad.line == EMULATOR.splitlines().index(
        "            def a_elem(x, k, row, goff): return x[(k//4)*2 + row//8][goff + k%4 + (row%8)*4]") + 1
    got = rows(write(tmp_path, EMULATOR.replace("lane//4 + (elem//2)*8)", "lane//4 + (elem%2)*8)")))
    assert got["mma.m16n8k16.float.C.f32"].kind in ("differ", "malformed")
    assert got["mma.m16n8k16.A.f16_bf16"].kind == "agree"


def test_a_construct_outside_the_subset_is_malformed(tmp_path: Path) -> None:
    got = rows(write(tmp_path, EMULATOR.replace("x[k//4][goff + k%4 + col*4]", "x[k//4][goff + k%4 + col**4]")))
    bad = got["mma.m16n8k8.B.tf32"]
    assert bad.kind == "malformed" and "BinOp outside the integer subset" in bad.detail


def test_registration_and_probe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert "tinygrad" in NAMES and ORIGINS["tinygrad"] == "tinygrad"
    monkeypatch.setattr(tg, "_installed", lambda: None)
    assert reference("tinygrad").probe().startswith("no tinygrad: pip install tinygrad==")
    with pytest.raises(FileNotFoundError):
        tg.evaluate_default([], path=tmp_path)


def test_installed_tinygrad_agrees() -> None:
    if tg._installed() is None:
        pytest.skip(f"reference tinygrad unavailable: {tg.probe()}")
    got = tg.evaluate_default(spec_layouts()).rows
    assert len(got) == 14 and all(r.kind == "agree" for r in got)
