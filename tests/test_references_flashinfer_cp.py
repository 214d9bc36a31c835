"""FlashInfer's ``tcgen05.cp .64x128b.warpx2::02_13`` of Q into Tensor Memory (``references/flashinfer_cp.py``,
reported by ``flashinfer``).

The reader is tested on a literal ``copy_q_fp8_to_tmem`` written here (FlashInfer 0.7.4's, the statements read):
agreeing, one number changed giving ``differ`` or a finding, a construct outside the subset refused at its line,
never executed; and on the installed wheel where ``flashinfer-python`` is installed (``pip install --no-deps
flashinfer-python==0.7.4``; skipped, saying so, otherwise).
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import flashinfer_cp, reference
from verify.checks.references.common import conform_rows
from verify.checks.references.pyfunc import Refused

COPY = '''\
@cute.jit
def copy_q_fp8_to_tmem(source, tmem_base, *, cta_group: cutlass.Constexpr[int]):
    """Copy64x512 E4M3 Q values to Layout E(1CTA) or Layout B(2CTA).
    """
    assert cta_group in (1, 2)
    group = prims.CTAGroup.CTA_1 if cta_group == 1 else prims.CTAGroup.CTA_2
    base_desc = Int64(
        prims.Tcgen05SmemDesc.build(
            source,
            leading_byte_offset=16,
            stride_byte_offset=1024,
            layout=2,
        )
    )
    for part in cutlass.range_constexpr(32):
        descriptor = base_desc + Int64((part // 8) * 512 + part % 8)
        prims.tcgen05_cp(
            prims.Tcgen05CpShape.SHAPE_64X128B,
            prims.make_tmem_ptr(tmem_base + Int32(part * 4), Int32),
            descriptor,
            group=group,
            multicast=prims.Tcgen05CpMulticast.WARPX2_02_13,
        )
'''


@functools.cache
def _specs() -> tuple:
    sp = api.load(SPECS)
    return tuple(x for x in (*api.layouts(sp), *api.map_layouts(sp))
                 if x.id in (flashinfer_cp.SPEC, flashinfer_cp.DATAPATH, "tcgen05.cp.64x128b.warpx2.01_23"))


def _rows(tmp_path: Path, text: str) -> list:
    p = tmp_path / flashinfer_cp.REL
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return conform_rows(flashinfer_cp.cp_items(_specs(), tmp_path), 60.0)


def test_written_copy_agrees(tmp_path: Path) -> None:
    got = _rows(tmp_path, COPY)
    assert [(r.spec, r.kind) for r in got] == [(flashinfer_cp.SPEC, "agree")]
    assert got[0].line == 2


def test_the_other_multicast_is_refused_not_compared(tmp_path: Path) -> None:
    got = _rows(tmp_path, COPY.replace("WARPX2_02_13", "WARPX2_01_23"))
    assert [r.kind for r in got] == ["malformed"] and "not .64x128b.warpx2::02_13" in got[0].detail


def test_a_changed_column_step_is_a_finding(tmp_path: Path) -> None:
    """Copies written 2 columns apart instead of 4: the copies no longer land alike."""
    got = _rows(tmp_path, COPY.replace("Int32(part * 4)", "Int32(part * 2)"))
    assert [r.kind for r in got] == ["malformed"] and "lands unlike copy 0" in got[0].detail


def test_layout_b_rows_and_a_planted_lane_change_differs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Layout B gives row s the lanes s and s + 64; were they ::01_23's (s % 32 + 64 (s // 32) + 32 c), the reader's
    table differs from the spec at its first differing cell."""
    dp = next(x for x in _specs() if x.id == flashinfer_cp.DATAPATH)
    lanes = flashinfer_cp._lanes(dp)
    assert lanes[0] == (0, 64) and lanes[32] == (32, 96) and len(lanes) == 64
    monkeypatch.setattr(flashinfer_cp, "_lanes", lambda _dp: {s: (s % 32 + 64 * (s // 32), s % 32 + 64 * (s // 32) + 32)
                                                              for s in range(64)})
    got = _rows(tmp_path, COPY)
    assert [r.kind for r in got] == ["differ"]
    assert "src_row 0, src_byte 0, copy 1" in got[0].detail


def test_refused_constructs(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="outside the integer subset"):
        flashinfer_cp.read_copy(COPY.replace("(part // 8) * 512", "(part // 8) * len(x)"))
    with pytest.raises(Refused, match="no K-major 128-byte swizzle"):
        flashinfer_cp.read_copy(COPY.replace("layout=2", "layout=4"))
    with pytest.raises(Refused, match="names no Layout B"):
        flashinfer_cp.read_copy(COPY.replace("Layout B(2CTA)", "Layout F"))
    with pytest.raises(Refused, match="0 definitions"):
        flashinfer_cp.read_copy("x = 1\n")


def test_absent_file_or_spec_gives_nothing(tmp_path: Path) -> None:
    assert flashinfer_cp.cp_items(_specs(), tmp_path) == []
    assert flashinfer_cp.cp_items([], tmp_path) == []


def test_installed_flashinfer_states_02_13() -> None:
    why = reference("flashinfer").probe()
    if why:
        pytest.skip(f"reference flashinfer unavailable: {why}")
    items = flashinfer_cp.cp_items(_specs())
    if not items:
        pytest.skip(f"no {flashinfer_cp.REL} in the installed FlashInfer")
    got = conform_rows(items, 60.0)
    assert [(r.spec, r.kind) for r in got] == [(flashinfer_cp.SPEC, "agree")]
