"""FlashInfer's sm_100 descriptor code as a reference for ``tcgen05.descriptor.swizzle`` (``references/flashinfer_desc.py``,
issue 40): its ``LayoutType`` IntEnum and the statement putting it into bits 61-63, read with ``ast``.  Tested on a
cut-down file of the same shape, with a changed code (a difference), a missing mode or a non-literal value (refused),
the field at another bit (refused), and on the installed wheel where it is present."""
from __future__ import annotations

import functools

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import flashinfer_desc as fd
from verify.checks.references.common import conform_rows, located

FILE = '''
from enum import IntEnum


class LayoutType(IntEnum):
    SWIZZLE_NONE = 0
    SWIZZLE_128B_BASE32B = 1
    SWIZZLE_128B = 2
    SWIZZLE_64B = 4
    SWIZZLE_32B = 6


def make_smem_desc_base(layout, swizzle, major) -> int:
    layout_type = _layout_type(swizzle)
    desc = 0
    desc |= (leading_byte_offset & 0x3FFF) << 16
    desc |= (int(layout_type) & 0x7) << 61
    return desc & 0xFFFF_FFFF_FFFF_FFFF
'''


@functools.cache
def _maps() -> tuple:
    return tuple(api.map_layouts(api.load(SPECS)))


def _rows(tmp_path, text: str) -> list:
    (tmp_path / fd.REL).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / fd.REL).write_text(text, encoding="utf-8")
    return conform_rows(fd.swizzle_items(list(_maps()), tmp_path), 10.0)


def test_layout_type_is_the_swizzle_codes_at_bits_61_to_63(tmp_path):
    rows = _rows(tmp_path, FILE)
    assert [(r.kind, r.spec, r.header, r.line) for r in rows] == [("agree", fd.SPEC, fd.FILE, 5)]


@pytest.mark.parametrize("old, new, kind, why", [
    ("SWIZZLE_64B = 4", "SWIZZLE_64B = 3", "differ", ""),
    ("    SWIZZLE_32B = 6\n", "", "malformed", "no SWIZZLE_32B"),
    ("SWIZZLE_128B = 2", "SWIZZLE_128B = 1 + 1", "malformed", "no integer literal"),
    ("& 0x7) << 61", "& 0x3) << 62", "malformed", "bit 62 with mask 0x3"),
])
def test_a_changed_file_differs_or_is_refused(tmp_path, old, new, kind, why):
    assert FILE.count(old) == 1
    rows = _rows(tmp_path, FILE.replace(old, new))
    assert [r.kind for r in rows] == [kind] and why in rows[0].detail


def test_no_file_no_rows(tmp_path):
    assert fd.swizzle_items(list(_maps()), tmp_path) == []


def test_installed_flashinfer_states_the_swizzle_codes():
    where = located(fd.DIST, fd.REL)
    if where is None or not where.is_file():
        pytest.skip(f"reference flashinfer unavailable: no {fd.REL} (pip install --no-deps flashinfer-python==0.7.4)")
    rows = conform_rows(fd.swizzle_items(list(_maps())), 10.0)
    assert [(r.kind, r.spec) for r in rows] == [("agree", fd.SPEC)]
