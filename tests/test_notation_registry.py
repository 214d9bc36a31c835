"""A new shared-memory notation is one registration (``layout.notations.registry.register_reader``): every
command that takes a shared-memory layout reads it with no other change (``api.shared_layout``,
``consistent``'s sides, ``descriptor``, ``banks``, ``conform`` of a shared ``[[layout]]``, and their options on
the command line).  The notation registered here is test-only: ``ROWSxCOLS``, a row-major tile with 128-byte
swizzling, the tile a TMA box ``ROWSxCOLS:128B`` writes, so that each command's answer can be compared with the
built-in TMA reader's (and one that differs must be told apart)."""
from __future__ import annotations

import json
import re

import pytest

from verify import api
from verify.checks.consistency_sides import Given
from verify.layout.notations import NotationError, registry
from verify.layout.shared import tma_layout

from conftest import cli


def _read(text: str | bytes, *, bits: int | None = None, base: int = 0, source: str = "argument", **_: object):
    raw = text.decode() if isinstance(text, bytes) else text
    m = re.fullmatch(r"(\d+)x(\d+)", raw.strip())
    if m is None:
        raise NotationError("a rows128 tile is ROWSxCOLS", 1, 1, source)
    if bits is None:
        raise registry.NeedsType("a rows128 tile needs its element type", "rows128 tile")
    return tma_layout(int(m.group(1)), int(m.group(2)), bits, "128B", base)


@pytest.fixture
def rows128():
    """The test-only notation, registered for the test and removed after it (the one place it is declared)."""
    registry.readers("shared")  # the package's own readers first
    from verify.cli.main import _parser
    r = registry.register_reader("shared", registry.SharedReader(
        "rows128", _read, order=50, flag="--rows128", metavar="RxC", help="test only: a 128B-swizzled row-major tile"))
    _parser.cache_clear()  # the command line's parsers are built once a process: again, with the new option
    yield r
    del registry._READERS["shared"]["rows128"]
    _parser.cache_clear()


def test_registered_once_read_by_the_api(rows128) -> None:
    assert registry.reader("shared", "rows128") is rows128
    assert "rows128" in [r.name for r in api.shared_notations()]
    mine = api.shared_layout("rows128", "64x64", type="f16")
    tma = api.shared_layout("tma", "64x64:128B", type="f16")
    assert mine.element_bits == tma.element_bits == 16
    with pytest.raises(NotationError, match="a rows128 tile is ROWSxCOLS"):
        api.shared_layout("rows128", "64 by 64", type="f16")
    with pytest.raises(ValueError, match="needs its element type"):
        api.shared_layout("rows128", "64x64")


def test_consistent_reads_it(rows128) -> None:
    same = api.consistent(Given("rows128", "64x64"), Given("tma", "64x64:128B"), type="f16")
    assert same.status == "consistent"
    other = api.consistent(Given("rows128", "64x64"), Given("tma", "64x64:none"), type="f16")
    assert other.status != "consistent"
    with pytest.raises(ValueError, match="give the element type .* of the rows128 tile"):
        api.consistent(Given("rows128", "64x64"), Given("tma", "64x64:128B"))


def test_descriptor_and_banks_read_it(rows128) -> None:
    mine = api.shared_layout("rows128", "64x64", type="f16")
    tma = api.shared_layout("tma", "64x64:128B", type="f16")
    none = api.shared_layout("tma", "64x64:none", type="f16")
    d = [r.to_json() for _, r in api.descriptor(mine, major="K")]
    assert d == [r.to_json() for _, r in api.descriptor(tma, major="K")]
    assert d != [r.to_json() for _, r in api.descriptor(none, major="K")]
    b = api.banks(mine, "ldmatrix.x4").to_json()
    assert b == api.banks(tma, "ldmatrix.x4").to_json()
    assert b != api.banks(none, "ldmatrix.x4").to_json()


def test_command_line_options_follow(rows128, capsys) -> None:
    rc, out, err = cli(capsys, "descriptor", "--rows128", "64x64", "--type", "f16", "--format", "json")
    rc_tma, out_tma, _ = cli(capsys, "descriptor", "--tma", "64x64:128B", "--type", "f16", "--format", "json")
    assert (rc, err) == (rc_tma, "")
    assert json.loads(out)["results"] == json.loads(out_tma)["results"]
    rc, out, err = cli(capsys, "consistent", "--writer", "rows128:64x64", "--reader", "tma:64x64:128B", "--type", "f16")
    assert rc == 0, err
    rc, out, err = cli(capsys, "consistent", "--writer", "rows128:64x64", "--reader", "tma:64x64:none", "--type", "f16")
    assert rc == 1, err


def test_gone_when_not_registered(capsys) -> None:
    with pytest.raises(ValueError, match="not 'rows128'"):
        api.shared_layout("rows128", "64x64", type="f16")
    rc, _, err = cli(capsys, "descriptor", "--rows128", "64x64", "--type", "f16")
    assert rc == 2 and "one of the arguments --cute --triton --formula --tma --id is required" in err


def test_conform_of_a_shared_layout_reads_it(rows128) -> None:
    same = api.conform_map("wgmma.shared.atom.K.128B", "rows128", "8x64", type="f16")
    assert same.status == api.conform_map("wgmma.shared.atom.K.128B", "tma", "8x64:128B", type="f16").status == "equal"
    other = api.conform_map("wgmma.shared.atom.MN.128B", "rows128", "64x8", type="f16")  # rows contiguous there
    assert other.status == "differs"
