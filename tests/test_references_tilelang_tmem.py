"""TileLang's Tensor Memory data-path atoms (``references/tilelang_tmem.py``, reported by ``tilelang``).

The reader is tested on literal files written here (agreeing; one number changed giving ``differ``; a construct
outside the subset refused at its line, never executed; a docstring that no longer states the addressing refused),
and on the installed TileLang where it is installed (skipped with the reason otherwise).
"""
from __future__ import annotations

import functools
import textwrap
from pathlib import Path

import pytest
from conftest import SPECS

from verify import api
from verify.checks.fragment import DEFAULT_TIMEOUT
from verify.checks.references import reference, tilelang_tmem


@functools.cache
def _all() -> tuple:
    sp = tuple(api.load(SPECS))
    return tuple(api.layouts(sp)) + tuple(api.map_layouts(sp))


ATOMS = '''\
"""Atoms in virtual TMEM addressing (datapath stride one,
column stride 128), as CUTLASS's tmem_frg."""
from enum import Enum
from tilelang.layout import cute


class TCGEN05TmemAllocMode(Enum):
    INTERLEAVED = "interleaved"
    NON_INTERLEAVED = "non_interleaved"


def make_tmem_frg_atom(num_sms, alloc_mode, atom_m, atom_n):
    """doc"""
    if num_sms == 1:
        assert alloc_mode in {TCGEN05TmemAllocMode.INTERLEAVED, TCGEN05TmemAllocMode.NON_INTERLEAVED}, "1sm"
        if atom_m == 64:
            atom = cute.make_layout(((16, 4), atom_n), ((1, 32), 128))
            tile_stride = 1 if alloc_mode is TCGEN05TmemAllocMode.INTERLEAVED else 2
            return atom, tile_stride
        if atom_m == 128:
            return cute.make_layout((128, atom_n)), 1
        raise ValueError(f"bad M {atom_m}")
    if num_sms == 2:
        if atom_m == 64:
            assert atom_n % 2 == 0, f"odd {atom_n}"
            return cute.make_layout((64, (atom_n // 2, 2)), (1, (128, 64))), 1
        if atom_m == 128:
            return cute.make_layout((128, atom_n)), 1
    raise ValueError("bad")


def make_tmem_frg_ws_atom(atom_m, atom_n):
    assert atom_n in (64, 128, 256), "ws N"
    if atom_m == 32:
        return cute.make_layout((32, (atom_n // 4, 4)), (1, (128, 32)))
    if atom_m == 64:
        return cute.make_layout((64, (atom_n // 2, 2)), (1, (128, 64)))
    raise ValueError("bad")
'''


def _rows(tmp_path: Path, text: str, only: tuple[str, ...] = ()) -> list:
    (tmp_path / tilelang_tmem.FILE).write_text(textwrap.dedent(text))
    return tilelang_tmem.evaluate(tmp_path, list(_all()), DEFAULT_TIMEOUT, "layout", only)


def _by_spec(rows: list) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in rows:
        out.setdefault(r.spec, set()).add(r.kind)
    return out


def test_tmem_atoms_agree_with_every_data_path_they_state(tmp_path):
    """Each atom, read at lane v % 128 and column v // 128 of its value, is the spec's data path for every N: A and
    B per CTA of two, D and F (BASE 0) of one, and the .ws ones E (its reviewed 2x2 correction) and G (1x4)."""
    rows = _rows(tmp_path, ATOMS)
    assert _by_spec(rows) == {s: {"agree"} for s in (
        "tcgen05.datapath.A", "tcgen05.datapath.B", "tcgen05.datapath.D", "tcgen05.datapath.E@corrected",
        "tcgen05.datapath.F", "tcgen05.datapath.G")}
    g = [r for r in rows if r.spec == "tcgen05.datapath.G"]
    assert sorted(dict(r.params)["N"] for r in g) == [64, 128, 256]
    assert g[0].trait == "make_tmem_frg_ws_atom(32, 64)" and g[0].header == "layout/mma_sm100_layout.py"
    assert g[0].line == ATOMS.splitlines().index("def make_tmem_frg_ws_atom(atom_m, atom_n):") + 1
    f = next(r for r in rows if r.spec == "tcgen05.datapath.F")
    assert dict(f.params)["BASE"] == 0


def test_a_changed_stride_differs_at_its_data_path_only(tmp_path):
    """Layout G with its N quarters 16 lanes apart (not 32): G differs, with the first differing point; the rest
    still agree."""
    rows = _rows(tmp_path, ATOMS.replace("(1, (128, 32))", "(1, (128, 16))"), ("tcgen05.datapath.E", "tcgen05.datapath.G"))
    by = _by_spec(rows)
    assert by["tcgen05.datapath.G"] == {"differ"}
    assert by["tcgen05.datapath.E@corrected"] == {"agree"}
    bad = next(r for r in rows if r.spec == "tcgen05.datapath.G")
    assert bad.detail


def test_constructs_outside_the_subset_are_refused_at_their_line(tmp_path):
    """A call of anything but ``cute.make_layout`` (here ``eval``) is refused at its file:line:col, never run; a
    failing assertion refuses the call; a docstring without the addressing refuses the file."""
    evil = ATOMS.replace("return cute.make_layout((32, (atom_n // 4, 4)), (1, (128, 32)))",
                         "return eval('__import__(\"os\").system(\"false\")')")
    rows = _rows(tmp_path, evil, ("tcgen05.datapath.G",))
    line = evil.splitlines().index("        return eval('__import__(\"os\").system(\"false\")')") + 1
    assert {r.kind for r in rows} == {"malformed"}
    assert rows[0].detail.startswith(f"mma_sm100_layout.py:{line}:15: Call outside the subset")
    asserted = _rows(tmp_path, ATOMS.replace("atom_n in (64, 128, 256)", "atom_n in (64, 128)"),
                     ("tcgen05.datapath.G",))
    assert [r.kind for r in asserted] == ["agree", "agree", "malformed"]
    assert "the assertion fails" in asserted[2].detail
    undoc = _rows(tmp_path, ATOMS.replace("datapath stride one", "lanes first"))
    assert [(r.kind, r.line) for r in undoc] == [("malformed", 1)]
    assert "addressing" in undoc[0].detail


def test_a_tilelang_without_the_file_states_no_data_path(tmp_path):
    rows = tilelang_tmem.evaluate(tmp_path, list(_all()), DEFAULT_TIMEOUT, "layout")
    assert [r.kind for r in rows] == ["unmatched"]


def test_installed_tilelang_states_the_ws_data_paths():
    """TileLang 0.1.15's mma_sm100_layout.py: every data path it states agrees, E (corrected) and G among them: the
    .ws data paths' second origin beside CuTe."""
    ref = reference("tilelang")
    why = ref.probe()
    if why:
        pytest.skip(f"reference tilelang unavailable: {why}")
    root = tilelang_tmem_root()
    if not (root / tilelang_tmem.FILE).is_file():
        pytest.skip(f"this TileLang has no {tilelang_tmem.FILE}")
    rows = tilelang_tmem.evaluate(root, list(_all()), DEFAULT_TIMEOUT, "layout")
    by = _by_spec(rows)
    assert by["tcgen05.datapath.E@corrected"] == {"agree"} and by["tcgen05.datapath.G"] == {"agree"}
    assert all(k == {"agree"} for k in by.values())


def tilelang_tmem_root() -> Path:
    from verify.checks.references import tilelang
    root = tilelang._installed()
    assert root is not None
    return root
