"""``conform ID`` loads only the spec file that defines ID (``api.find_layout``, ``catalog.spec.holding``): the
other files' ids are read without parsing a formula, and the answer is the one a whole load gives."""
from __future__ import annotations

from pathlib import Path

import pytest

import verify.catalog.spec as spec_module
from verify import api
from verify.catalog import bundled
from verify.errors import SpecError

from conftest import cli

SPECS = bundled.resolve().path


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    loaded: list[str] = []
    real = spec_module._load_spec_text

    def counted(text: str, path: str):
        loaded.append(path)
        return real(text, path)
    monkeypatch.setattr(spec_module, "_load_spec_text", counted)
    return loaded


def test_every_id_is_what_a_whole_load_gives() -> None:
    specs = api.load(SPECS)
    ids = [x.id for x in (*api.layouts(specs), *api.map_layouts(specs))]
    assert any(i.endswith("@corrected") for i in ids) and api.map_layouts(specs)
    for lid in ids:
        one = spec_module.holding([SPECS], lid)
        assert one is not None and len(one) == 1, lid
        assert api.find_layout(SPECS, lid) == api.layout(specs, lid), lid


def test_conform_loads_one_spec_file(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                     tmp_path: Path) -> None:
    code = tmp_path / "a.idx"
    code.write_text("row = lane // 4 + 8 * ((i // 2) % 2)\ncol = (lane % 4) * 2 + i % 2 + 8 * (i // 4)\n")
    loaded = _counting(monkeypatch)
    rc, out, err = cli(capsys, "conform", "mma.m16n8k16.A.f16_bf16", "--formula", str(code))
    assert rc == 0, err
    assert len(set(loaded)) == 1 and len(spec_module.spec_files([SPECS])) > 1


def test_part_of_an_id_and_unknown_ids_load_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = _counting(monkeypatch)
    whole = api.load(SPECS)
    part = "mma.m16n8k16.A.f16_bf1"
    assert spec_module.holding([SPECS], part) is None
    assert api.find_layout(SPECS, part) == api.layout(whole, part)
    loaded.clear()
    with pytest.raises(KeyError, match="no layout 'no.such.id'"):
        api.find_layout(SPECS, "no.such.id")
    assert len(set(loaded)) == len(spec_module.spec_files([SPECS]))


def test_an_id_two_files_define_is_the_whole_load_s_error(tmp_path: Path) -> None:
    one = next(p for p in spec_module.spec_files([SPECS]) if spec_module.layout_ids(p))
    lid = sorted(spec_module.layout_ids(one))[0]
    for name in ("a.toml", "b.toml"):
        (tmp_path / name).write_text(one.read_text(encoding="utf-8"), encoding="utf-8")
    assert spec_module.holding([tmp_path], lid) is None
    with pytest.raises(SpecError, match="is also defined in"):
        api.find_layout(str(tmp_path), lid)
