"""Mosaic GPU's ``tcgen05.cp`` copies (``references/mosaic_cp.py``, reported by ``mosaic``).

The reader is tested on a small ``tcgen05.py`` written here (Mosaic's two copy functions cut to what is read:
agreeing for ``.128x256b`` and ``.128x128b``, one number changed giving ``differ``, a check removed refused at its
function), and on the installed files where ``jax`` is installed (``pip install --no-deps jax==0.10.2``; skipped,
saying so, otherwise): ``.128x256b`` and ``.128x128b`` agree, ``.64x128b.warpx2::01_23`` differs (the reviewed
difference of ``reviewed_more.KNOWN_MORE``), and what Mosaic calls ``::01_23`` is the spec's ``::02_13``.
"""
from __future__ import annotations

import functools
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import matrix, mosaic, mosaic_cp
from verify.checks.references.common import Evaluated, conform_rows
from verify.checks.references.tiled import read_source

TC_CP = '''\
from . import fragmented_array as fa
TMEM_ROWS = 128

class TMEMLayout(fa.TiledLayout):
    pass

def tmem_default_layout(packing: int = 1) -> TMEMLayout:
    return TMEMLayout(
        fa.Tiling(((TMEM_ROWS, packing), (fa.WARP_SIZE, packing))),
        warp_dims=(-4,),
        lane_dims=(-2,),
        vector_dim=-1,
    )

def async_copy_smem_to_tmem(smem_ref, tmem_ref, swizzle, collective=False):
    bitwidth = utils.bitwidth(dtype)
    if tmem_ref.packing != 32 // bitwidth:
        raise ValueError("packing")
    if tmem_ref.shape[0] != TMEM_ROWS:
        raise ValueError("rows")
    if tmem_ref.layout != tmem_default_layout(packing=tmem_ref.packing):
        raise ValueError("layout")
    swizzle_elems = 8 * swizzle // bitwidth
    expected_smem_shape = utils.tile_shape(tmem_ref.shape, (8, swizzle_elems))
    row_tile_stride, col_tile_stride, inner_row_stride, inner_col_stride = strides
    if swizzle == 16:
        cp_shape = nvvm.Tcgen05CpShape.SHAPE_128x128b
        cp_cols_bytes = 16
    else:
        cp_shape = nvvm.Tcgen05CpShape.SHAPE_128x256b
        cp_cols_bytes = 32
    minor_elems_per_cp = cp_cols_bytes * 8 // bitwidth
    cps_per_smem_minor_tile = swizzle_elems // minor_elems_per_cp
    col_tile_byte_stride = col_tile_stride * bitwidth // 8
    for smem_minor_tile in range(num_smem_minor_tiles):
        for cp_idx in range(cps_per_smem_minor_tile):
            smem_byte_offset = smem_minor_tile * col_tile_byte_stride + cp_idx * cp_cols_bytes
            tmem_cols_per_cp = cp_cols_bytes // 4
            tmem_col = (smem_minor_tile * cps_per_smem_minor_tile + cp_idx) * tmem_cols_per_cp
            nvvm.tcgen05_cp(cp_shape, tmem_col, desc)
'''
FA_CP = "WARP_SIZE = 32\n"
IDS = ("tcgen05.cp.128x256b", "tcgen05.cp.128x128b", "tcgen05.cp.64x128b.warpx2.01_23",
       "tcgen05.cp.64x128b.warpx2.02_13")


@functools.cache
def _index() -> dict:
    sp = api.load(SPECS)
    lays = [*api.layouts(sp), *api.map_layouts(sp)]
    return {k: v for k, v in mosaic._index(lays).items() if k in IDS}


def _reader(tc: str = TC_CP) -> mosaic.Reader:
    texts = {"fragmented_array": FA_CP, "tcgen05": tc, "utils": "WARPGROUP_SIZE: int = 128\n"}
    return mosaic.Reader({k: read_source(textwrap.dedent(v), f"{k}.py", mosaic.FILES) for k, v in texts.items()})


def _rows(items: list[Evaluated]) -> list:
    return conform_rows(items, 60.0)


def test_written_copies_agree_for_every_swizzle_and_width() -> None:
    items = mosaic_cp.smem_copy_items(_reader(), _index(), "tcgen05.py", "tcgen05", mosaic._eval_int)
    got = _rows(items)
    assert {r.spec for r in got} == {"tcgen05.cp.128x256b", "tcgen05.cp.128x128b"}
    assert len(got) == len(mosaic_cp.SWIZZLES) * len(mosaic_cp.BITWIDTHS)
    assert {r.kind for r in got} == {"agree"}, [r.detail for r in got if r.kind != "agree"][:1]


def test_a_changed_column_step_differs() -> None:
    """Every copy written one 32-bit column past its taddr: the map differs at its first byte."""
    tc = TC_CP.replace("(smem_minor_tile * cps_per_smem_minor_tile + cp_idx) * tmem_cols_per_cp",
                       "(smem_minor_tile * cps_per_smem_minor_tile + cp_idx) * tmem_cols_per_cp + 1")
    got = _rows(mosaic_cp.smem_copy_items(_reader(tc), _index(), "tcgen05.py", "tcgen05", mosaic._eval_int))
    assert got and {r.kind for r in got} == {"differ"}
    assert "tmem_col" in got[0].detail


def test_a_wrong_shape_choice_differs() -> None:
    """The 16-byte swizzle given the 256-bit shape with 16-byte copies: read as .128x256b, it states half a row,
    which is no .128x256b map (the table lacks bytes 16-31 of each row)."""
    tc = TC_CP.replace("cp_shape = nvvm.Tcgen05CpShape.SHAPE_128x128b", "cp_shape = nvvm.Tcgen05CpShape.SHAPE_128x256b")
    got = _rows(mosaic_cp.smem_copy_items(_reader(tc), _index(), "tcgen05.py", "tcgen05", mosaic._eval_int))
    assert {r.spec for r in got} == {"tcgen05.cp.128x256b"}
    assert {r.kind for r in got if "swizzle 16," in r.trait} == {"differ"}
    assert {r.kind for r in got if "swizzle 16," not in r.trait} == {"agree"}


def test_a_removed_layout_check_is_refused_at_the_function() -> None:
    tc = TC_CP.replace("if tmem_ref.layout != tmem_default_layout(packing=tmem_ref.packing):", "if False:")
    items = mosaic_cp.smem_copy_items(_reader(tc), _index(), "tcgen05.py", "tcgen05", mosaic._eval_int)
    assert items and all(i.error and "no check" in i.error for i in items)
    assert {i.line for i in items} == {tc.splitlines().index("def async_copy_smem_to_tmem(smem_ref, tmem_ref, "
                                                             "swizzle, collective=False):") + 1}


def test_no_spec_no_rows() -> None:
    assert mosaic_cp.smem_copy_items(_reader(), {}, "tcgen05.py", "tcgen05", mosaic._eval_int) == []
    assert mosaic_cp.b_scales_copy_items(_reader(), {}, "tcgen05.py", "tcgen05", mosaic._eval_int) == []


def test_the_01_23_difference_is_reviewed_and_explains_the_layout() -> None:
    pat = next(p for refs, p, _ in matrix.KNOWN if refs == ("mosaic",) and "WARPX2_01_23" in p)
    assert re.fullmatch(pat, "async_copy_scales_smem_to_tmem: WARPX2_01_23 of the docstring's buffer.reshape(2, 4)")


# ----------------------------------------------------------------------------- the installed files

def _installed() -> Path:
    root = mosaic._installed()
    if root is None:
        pytest.skip(f"reference mosaic unavailable: {mosaic.probe()}")
    return root


def test_installed_mosaic_copies() -> None:
    root = _installed()
    reader = mosaic.read_files(root)
    got = _rows(mosaic_cp.smem_copy_items(reader, _index(), "tcgen05.py", "tcgen05", mosaic._eval_int))
    assert {r.spec for r in got} == {"tcgen05.cp.128x256b", "tcgen05.cp.128x128b"} and {r.kind for r in got} == {"agree"}
    b = _rows(mosaic_cp.b_scales_copy_items(reader, _index(), "tcgen05.py", "tcgen05", mosaic._eval_int))
    assert [(r.spec, r.kind) for r in b] == [("tcgen05.cp.64x128b.warpx2.01_23", "differ")]
    assert "src_row 0, src_byte 0, copy 1: spec (tmem_lane 32" in b[0].detail and "reference (tmem_lane 64" in b[0].detail


def test_installed_mosaic_01_23_is_the_specs_02_13() -> None:
    """Mosaic's ::01_23 map, read against the spec's ::02_13, is equal (both engines): the two readings swap."""
    root = _installed()
    index = _index()
    items = mosaic_cp.b_scales_copy_items(mosaic.read_files(root), index, "tcgen05.py", "tcgen05", mosaic._eval_int)
    assert len(items) == 1 and not items[0].error
    as_0213 = Evaluated(items[0].name, "", items[0].where, items[0].line, index["tcgen05.cp.64x128b.warpx2.02_13"],
                        map_rows=items[0].map_rows)
    assert [r.kind for r in _rows([as_0213])] == ["agree"]


def test_installed_mosaic_with_the_multicast_changed_reads_02_13(tmp_path: Path) -> None:
    root = _installed()
    for f in mosaic.FILES:
        shutil.copy(root / f"{f}.py", tmp_path / f"{f}.py")
    p = tmp_path / "tcgen05.py"
    text = p.read_text()
    assert text.count("multicast=nvvm.Tcgen05CpMulticast.WARPX2_01_23") == 1
    p.write_text(text.replace("multicast=nvvm.Tcgen05CpMulticast.WARPX2_01_23",
                              "multicast=nvvm.Tcgen05CpMulticast.WARPX2_02_13"))
    b = _rows(mosaic_cp.b_scales_copy_items(mosaic.read_files(tmp_path), _index(), "tcgen05.py", "tcgen05",
                                            mosaic._eval_int))
    assert [(r.spec, r.kind) for r in b] == [("tcgen05.cp.64x128b.warpx2.02_13", "agree")]


def test_reviewed_single_origin_and_unsettled_reasons() -> None:
    sp = api.load(SPECS)
    lays = [x for x in [*api.layouts(sp), *api.map_layouts(sp)]
            if x.id in ("tcgen05.cp.4x256b", "tcgen05.scale_vec.kinds")]
    m = matrix.build(lays, {})
    assert "what would settle it" in m.explained("tcgen05.scale_vec.kinds")
    assert m._explained_kind("tcgen05.scale_vec.kinds") == "unreferenced"
    # a single-origin reason explains nothing without its one agreeing reference, and never counts as one
    assert m.explained("tcgen05.cp.4x256b") == ""
    assert all(m.origins(x.id) == [] for x in lays)
