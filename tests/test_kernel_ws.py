"""``tcgen05.mma.ws`` (issue 38): the weight-stationary MMA's D where the catalog's ``.ws`` data-path layouts put it
(Layout G for M = 32, E as corrected for 64, D for 128), and its collector buffers for B (``.collector::b0``-``b3``
``::fill``/``::use``/``::lastuse``/``::discard``: a used buffer must hold the B the descriptor reads now).
Fixture: ``examples/kernels/tcgen05_ws.cu`` (two M = 64 MMAs sharing B through b0, ``::fill`` then ``::lastuse``)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from kernel_plants import KERNELS, agree, mutant, nvcc_makes
from verify.kernel.fragments import datapath
from verify.kernel.frontdoor import verify
from verify.kernel.machine import KernelError
from verify.outputs.kernel import kernel_text

BASE = "tcgen05_ws"
IDESC = 68157456  # kind::f16, D f32, A and B f16 K-major, N = 64, M = 64


def _rep(old: str, new: str) -> Callable[[list[str]], None]:
    def change(lines: list[str]) -> None:
        k = next(k for k, s in enumerate(lines) if old in s)
        lines[k] = lines[k].replace(old, new)
    return change


def test_the_ws_layouts_are_the_catalogs():
    """M = 64 with .ws is Layout E as corrected (2x2: rows in lanes 0-63, the second N/2 columns in lanes 64-127),
    M = 32 Layout G (the 32 rows in every lane quarter, N/4 columns each), M = 128 Layout D."""
    e = datapath(64, 64, 1, True, False)
    assert e.layout_id.startswith("tcgen05.datapath.E")
    assert (int(e.lane[5, 3]), int(e.col[5, 3])) == (5, 3) and (int(e.lane[5, 40]), int(e.col[5, 40])) == (69, 8)
    g = datapath(32, 64, 1, True, False)
    assert (int(g.lane[5, 20]), int(g.col[5, 20])) == (37, 4)
    d = datapath(128, 64, 1, True, False)
    assert np.array_equal(d.lane, np.broadcast_to(np.arange(128)[:, None], (128, 64)))


def test_the_weight_stationary_kernel_is_proved():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 2


def test_lastuse_made_use_stays_proved(tmp_path):
    r = verify(mutant(tmp_path, BASE, _rep("collector::b0::lastuse", "collector::b0::use")))
    assert r.status == "proved", kernel_text(r)
    agree(r)


@pytest.mark.parametrize("old,new,words", [
    ("collector::b0::fill", "collector::b0::discard", "collector buffer b0 holds no B (no .collector::b0::fill before "
                                                      "it, or it was freed)"),
    ("collector::b0::lastuse", "collector::b1::lastuse", "collector buffer b1 holds no B"),
    ("%rd12, %rd13, %r49", "%rd12, %rd10, %r49", "collector buffer b0 (filled at line 184) holds another B than the "
                                                 "descriptor reads now (element (0, 0) differs): the MMA may read either"),
])
def test_a_collector_buffer_used_without_its_b_is_an_error_at_its_line(tmp_path, old, new, words):
    with pytest.raises(KernelError) as e:
        verify(mutant(tmp_path, BASE, _rep(old, new)))
    assert e.value.line == 190 and words in e.value.message, e.value.message


def test_the_second_mmas_d_one_half_column_block_early_is_reported_at_d_0_16(tmp_path):
    """The second MMA's D 16 columns on instead of 32: its first half-block lands on the first MMA's columns 16-31."""
    r = verify(mutant(tmp_path, BASE, _rep("add.s32 \t%r48, %r21, 32;", "add.s32 \t%r48, %r21, 16;")))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert (wrong.element, wrong.count) == ("D[0, 16]", 6144)
    assert "has A[64, 0] * B[0, 0] (A's m is 64, the element's is 0)" in wrong.words
    assert "read Tensor Memory lane 0, column 16, which holds element (0, 0) of the D of the " \
        "tcgen05.mma.ws.kind::f16 at line 190" in kernel_text(r)


def test_the_instruction_descriptors_m_made_128_is_reported_at_d_0_32(tmp_path):
    """M = 128 (Layout D: row m in lane m, N columns): rows 64-127 of the first MMA's D land where the kernel reads
    the second half of its columns, and the MMA writes past the 64 allocated columns."""
    r = verify(mutant(tmp_path, BASE, _rep(f"mov.b32 \t%r49, {IDESC};", f"mov.b32 \t%r49, {IDESC + (4 << 24)};")))
    assert r.status == "refuted"
    agree(r)
    kinds = {f.kind: f for f in r.findings}
    assert set(kinds) == {"tmem_unallocated", "wrong_element"}
    assert (kinds["wrong_element"].element, kinds["wrong_element"].count) == ("D[0, 32]", 4096)


@pytest.mark.slow
def test_nvcc_makes_the_committed_fixture(tmp_path):
    nvcc_makes(tmp_path, BASE, BASE, [])
