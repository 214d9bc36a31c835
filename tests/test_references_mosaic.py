"""The JAX Mosaic GPU reference (``references.mosaic``) and its reader (``references.tiled``).

The reader is tested on literal layout files (constructors, keyword arguments, sibling modules, guards, and
what it refuses, never executing it); the ``TiledLayout`` semantics against the pictures Mosaic's own comments
draw (fragmented_array.py, the comments above ``WGMMA_LAYOUT``, ``WGMMA_LAYOUT_UPCAST_2X`` and
``WGMMA_TRANSPOSED_LAYOUT``); the reference on small files written here (agreeing, and one number changed giving
``differ``) and on the installed files where they are (``pip install --no-deps jax==0.10.2``; skipped otherwise).
"""
from __future__ import annotations

import functools
import shutil
import textwrap
from pathlib import Path

import pytest
from conftest import SPECS, cli

from verify import api
from verify.checks.references import NAMES, ORIGINS, reference
from verify.checks.references import mosaic
from verify.checks.references.common import conform_rows
from verify.checks.references.pyfunc import Refused
from verify.checks.references.tiled import Reader, placements, read_source, tile_shape

FA_TEXT = '''\
from . import utils
WARPGROUP_SIZE = utils.WARPGROUP_SIZE
WARP_SIZE = 32
WARPS_IN_WARPGROUP = WARPGROUP_SIZE // WARP_SIZE
WGMMA_LAYOUT = TiledLayout(
    Tiling(((64, 8), (16, 8), (8, 8), (2,))),
    warp_dims=(-7,),
    lane_dims=(-3, -2),
    vector_dim=-1,
)
WGMMA_LAYOUT_ACC_32BIT = TiledLayout(
    Tiling(((64, 8), (16, 8), (8, 8), (2,), (1,))),
    warp_dims=(-8,),
    lane_dims=(-4, -3),
    vector_dim=-1,
)
WGMMA_LAYOUT_8BIT = TiledLayout(
    Tiling(((64, 16), (16, 16), (8, 16), (4,))),
    warp_dims=(-7,),
    lane_dims=(-3, -2),
    vector_dim=-1,
)
WGMMA_LAYOUT_UPCAST_2X = TiledLayout(
    Tiling(((64, 16), (16, 16), (8, 16), (8,), (4,))),
    warp_dims=(-8,),
    lane_dims=(-4, -2, -3),
    vector_dim=-1,
)
WGMMA_TRANSPOSED_LAYOUT = TiledLayout(
    Tiling(((64, 8), (16, 8), (8, 8), (2, 2), (2, 1))),
    warp_dims=(-10,),
    lane_dims=(-6, -3, -5),
    vector_dim=-2,
)
'''
TC_TEXT = '''\
from . import fragmented_array as fa
TMEM_ROWS = 128

class TMEMLayout(fa.TiledLayout):
    pass

def _do_mma(k_step, is_scaled):
    scale_steps = None
    if is_scaled:
        if a:
            kind = "mxf8f6f4.block_scale.scale_vec::1X"
            scale_steps = 4
        elif b:
            kind = "mxf4.block_scale.scale_vec::2X"
            scale_steps = 2
        else:
            kind = "mxf4nvf4.block_scale.scale_vec::4X"
            scale_steps = 1
    for k_step in range(4):
        if is_scaled:
            scale_vec_width = 4 // scale_steps
            scale_id = (k_step % scale_steps) * scale_vec_width

def tmem_default_layout(packing: int = 1) -> TMEMLayout:
    """A TMEM layout used for 1CTA MMA with M=128 and 2CTA MMA with M=256."""
    if packing.bit_count() != 1:
        raise ValueError(f"Packing must be a power of 2, got: {packing}")
    return TMEMLayout(
        fa.Tiling(((TMEM_ROWS, packing), (fa.WARP_SIZE, packing))),
        warp_dims=(-4,),
        lane_dims=(-2,),
        vector_dim=-1,
    )

def tmem_half_lane_layout(columns, packing: int = 1) -> TMEMLayout:
    return TMEMLayout(
        fa.Tiling((
            (TMEM_ROWS // 2, columns),
            (fa.WARP_SIZE // 2, columns // 2),
            (packing,),
        )),
        warp_dims=(-5,),
        lane_dims=(-4, -3),
        vector_dim=-1,
    )

def tmem_m64_collective_layout(columns: int, packing: int = 1) -> TMEMLayout:
    return TMEMLayout(
        fa.Tiling((
            (TMEM_ROWS // 2, columns),
            (fa.WARP_SIZE, columns // 2),
            (packing,),
        )),
        warp_dims=(-4, -5,),
        lane_dims=(-3,),
        vector_dim=-1,
    )

def scales_layout() -> TMEMLayout:
    TMEM_QUARTER = TMEM_ROWS // 4
    return TMEMLayout(
        fa.Tiling(((TMEM_QUARTER * 4, 4), (TMEM_QUARTER, 1))),
        warp_dims=(fa.Replicated(times=4),),
        lane_dims=(-2,),
        vector_dim=-3,
    )

def async_copy_scales_smem_to_tmem(smem_ref, tmem_ref, collective=False):
    """Copies the scales.

    you can prepare it this way (pad_mn = (MN + 127) // 128 * 128)::

        jnp.pad(scales, ((0, pad_mn - mn), (0, 0)))
          .reshape(pad_mn // 128, 4, 32, k // 4, 4)
          .transpose(0, 3, 2, 1, 4)
          .reshape(pad_mn // 128, k // 4, 32, 16)
    """
'''
UTILS_TEXT = "WARPGROUP_SIZE: int = 128\n"


@functools.cache
def spec_layouts() -> list:
    specs = api.load(SPECS)
    return [*api.layouts(specs), *api.map_layouts(specs)]


def reader(fa: str = FA_TEXT, tc: str = TC_TEXT) -> Reader:
    texts = {"fragmented_array": fa, "tcgen05": tc, "utils": UTILS_TEXT}
    return Reader({k: read_source(textwrap.dedent(v), f"{k}.py", mosaic.FILES) for k, v in texts.items()})


def write(tmp_path: Path, fa: str = FA_TEXT, tc: str = TC_TEXT) -> Path:
    for name, text in (("fragmented_array", fa), ("tcgen05", tc), ("utils", UTILS_TEXT)):
        (tmp_path / f"{name}.py").write_text(text)
    return tmp_path


def lanes(layout, shape, rows, cols) -> list[list[int]]:
    """The lane holding each cell of warp 0's first rows x cols (Mosaic's pictures)."""
    held = {idx: ln for w, ln, _, _, idx in placements(layout, shape) if w == 0}
    return [[held[(r, c)] for c in range(cols)] for r in range(rows)]


# ----------------------------------------------------------------------------- the semantics

def test_tile_shape_of_the_docstring_example() -> None:
    """TiledLayout's docstring: (64, 8)(16, 8)(8, 8)(1, 2) applied to 128 x 128."""
    assert tile_shape(((64, 8), (16, 8), (8, 8), (1, 2)), (128, 128)) == (2, 16, 4, 1, 2, 1, 8, 4, 1, 2)


def test_the_pictures_of_mosaics_comments() -> None:
    r = reader()
    assert lanes(r.value("fragmented_array", "WGMMA_LAYOUT"), (64, 8), 4, 8) == [
        [0, 0, 1, 1, 2, 2, 3, 3], [4, 4, 5, 5, 6, 6, 7, 7], [8, 8, 9, 9, 10, 10, 11, 11],
        [12, 12, 13, 13, 14, 14, 15, 15]]
    assert lanes(r.value("fragmented_array", "WGMMA_TRANSPOSED_LAYOUT"), (64, 8), 4, 8) == [
        [0, 4, 1, 5, 2, 6, 3, 7], [0, 4, 1, 5, 2, 6, 3, 7], [8, 12, 9, 13, 10, 14, 11, 15],
        [8, 12, 9, 13, 10, 14, 11, 15]]
    assert lanes(r.value("fragmented_array", "WGMMA_LAYOUT_UPCAST_2X"), (64, 16), 2, 16) == [
        [0, 0, 0, 0, 2, 2, 2, 2, 1, 1, 1, 1, 3, 3, 3, 3], [4, 4, 4, 4, 6, 6, 6, 6, 5, 5, 5, 5, 7, 7, 7, 7]]


def test_register_order_is_row_major_over_the_register_array() -> None:
    """WGMMA_LAYOUT_ACC_32BIT over (64, 16): register k of thread 0 is d_k of the PTX accumulator."""
    entries = mosaic.fragment_entries(reader().value("fragmented_array", "WGMMA_LAYOUT_ACC_32BIT"), (64, 16))
    t0 = [(r, c) for t, _, r, c in entries if t == 0]
    assert t0 == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]


def test_tmem_layouts_columns_and_containers() -> None:
    r = reader()
    packed = mosaic.tmem_cells(r.call("tcgen05", "tmem_default_layout", packing=2), (128, 8))
    assert packed[(37, 5)] == (37, 2, 1)
    half = mosaic.tmem_cells(r.call("tcgen05", "tmem_half_lane_layout", 32), (64, 32))
    assert half[(17, 3)] == (32 + 1, 3, 0) and half[(17, 19)] == (32 + 16 + 1, 3, 0)
    quarter = mosaic.tmem_cells(r.call("tcgen05", "scales_layout"), (128, 4), quarter=True)
    assert quarter[(70, 3)] == (70, 2, 3)


# ----------------------------------------------------------------------------- the reader

@pytest.mark.parametrize(("text", "reason"), [
    ("X = eval('1')\n", "'eval' is no function of fragmented_array.py"),
    ("X = print.__self__\n", "names no sibling file"),
    ("import os\nX = os.system('true')\n", "a call of something other than"),
    ("X = [1, 2]\n", "List outside the subset"),
    ("X = Y\n", "bound to no argument, assignment or module name"),
    ("X = 1 // 0\n", "division by zero"),
    ("X = 2 ** 80\n", "outside the subset"),
])
def test_refused_constructs_with_their_position(text: str, reason: str) -> None:
    r = reader(fa=text)
    with pytest.raises(Refused) as e:
        r.value("fragmented_array", "X")
    assert reason in e.value.reason and e.value.file == "fragmented_array.py"


def test_refused_function_bodies() -> None:
    r = reader(tc="def f():\n    for x in y:\n        pass\n    return 1\n")
    with pytest.raises(Refused) as e:
        r.call("tcgen05", "f")
    assert "For statement outside the subset" in e.value.reason and (e.value.line, e.value.col) == (2, 4)


def test_refused_code_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    r = reader(fa=f"X = open({str(marker)!r}, 'w')\n")
    with pytest.raises(Refused):
        r.value("fragmented_array", "X")
    assert not marker.exists()


# ----------------------------------------------------------------------------- the reference

def rows(root: Path, ids: tuple[str, ...]) -> list:
    lays = [lay for lay in spec_layouts() if lay.id in ids or lay.id.removesuffix("@corrected") in ids]
    return list(mosaic.evaluate_default(lays, path=root).rows)


def test_written_layouts_agree(tmp_path: Path) -> None:
    got = rows(write(tmp_path), ("wgmma.m64nNk16.A.f16_bf16", "wgmma.m64nNk32.A.u8_s8", "tcgen05.packing.A.b16.packed",
                                 "tcgen05.mma.m1n4.SFA.ue8m0.2x", "tcgen05.cp.32x128b.warpx4",
                                 "storage.sf.cutlass.128x4.tile"))
    assert got and all(r.kind == "agree" for r in got), [r for r in got if r.kind != "agree"][:1]
    assert {r.spec for r in got} == {"wgmma.m64nNk16.A.f16_bf16", "wgmma.m64nNk32.A.u8_s8",
                                     "tcgen05.packing.A.b16.packed", "tcgen05.mma.m1n4.SFA.ue8m0.2x",
                                     "tcgen05.cp.32x128b.warpx4", "storage.sf.cutlass.128x4.tile"}


def test_one_number_changed_differs_at_its_line(tmp_path: Path) -> None:
    old = "Tiling(((64, 16), (16, 16), (8, 16), (4,))),\n    warp_dims=(-7,),\n    lane_dims=(-3, -2),"
    fa = FA_TEXT.replace(old, old.replace("(-3, -2)", "(-2, -3)"))
    got = rows(write(tmp_path, fa=fa), ("wgmma.m64nNk32.A.u8_s8",))
    assert [r.kind for r in got] == ["differ"] and got[0].line == FA_TEXT.splitlines().index(
        "WGMMA_LAYOUT_8BIT = TiledLayout(") + 1
    fa = FA_TEXT.replace("Tiling(((64, 16), (16, 16), (8, 16), (4,)))", "Tiling(((64, 16), (16, 16), (8, 16), (2,)))")
    got = rows(write(tmp_path, fa=fa), ("wgmma.m64nNk32.A.u8_s8",))   # 64 lanes: no layout at all
    assert [r.kind for r in got] == ["malformed"] and "lane dims" in got[0].detail
    tc = TC_TEXT.replace("scale_id = (k_step % scale_steps) * scale_vec_width", "scale_id = k_step % scale_steps")
    got = rows(write(tmp_path, tc=tc), ("tcgen05.mma.m1n4.SFA.ue8m0.2x", "tcgen05.sf.A.4x1"))
    kinds = {(r.spec, r.kind) for r in got}
    assert ("tcgen05.mma.m1n4.SFA.ue8m0.2x", "malformed") in kinds or ("tcgen05.mma.m1n4.SFA.ue8m0.2x", "differ") in kinds
    assert ("tcgen05.sf.A.4x1", "malformed") in kinds     # scales_layout's byte and the MMA's read disagree


def test_lane_groups_of_the_half_lane_layout_are_f_at_base_0_and_16() -> None:
    spec = next(lay for lay in spec_layouts() if lay.id == "tcgen05.datapath.F")

    def kinds(tc: str) -> list[tuple[int, str]]:   # a layout that cannot be evaluated: one row, no BASE
        items = [ev for ev in mosaic._tmem_items(reader(tc=tc), {spec.id: spec}, "tcgen05.py")
                 if dict(ev.params)["N"] == 64]
        return sorted((dict(r.params).get("BASE", -1), r.kind) for r in conform_rows(items, 10.0))
    assert kinds(TC_TEXT) == [(0, "agree"), (16, "agree")]
    assert kinds(TC_TEXT.replace("(fa.WARP_SIZE // 2, columns // 2)", "(fa.WARP_SIZE // 2, columns // 4)")) \
        == [(-1, "malformed")]     # the tile no longer holds 32 lanes


def test_probe_and_registration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "mosaic" in NAMES and ORIGINS["mosaic"] == "JAX Mosaic GPU"
    monkeypatch.setattr(mosaic, "_installed", lambda: None)
    assert reference("mosaic").probe().startswith("no Mosaic GPU files: pip install --no-deps jax==")
    with pytest.raises(FileNotFoundError):
        mosaic.evaluate_default([], path=tmp_path / "nowhere")


# ----------------------------------------------------------------------------- the installed files

def _need() -> Path:
    root = mosaic._installed()
    if root is None:
        pytest.skip(f"reference mosaic unavailable: {mosaic.probe()}")
    return root


def test_installed_mosaic_agrees_on_a_sample() -> None:
    root = _need()
    got = rows(root, ("wgmma.m64nNk32.A.e4m3_e5m2", "tcgen05.datapath.B", "tcgen05.sf.A.4x1",
                      "tcgen05.mma.m1n4.SFA.ue8m0.1x", "tcgen05.cp.32x128b.warpx4"))
    assert got and all(r.kind == "agree" for r in got), [r for r in got if r.kind != "agree"][:1]


def test_installed_mosaic_mutated_is_found(tmp_path: Path) -> None:
    root = _need()
    for f in mosaic.FILES:
        shutil.copy(root / f"{f}.py", tmp_path / f"{f}.py")
    p = tmp_path / "fragmented_array.py"
    text = p.read_text()
    old = "Tiling(((64, 8), (16, 8), (8, 8), (2,))),\n    warp_dims=(-7,),\n    lane_dims=(-3, -2),"
    assert old in text
    p.write_text(text.replace(old, old.replace("lane_dims=(-3, -2)", "lane_dims=(-2, -3)")))
    got = rows(tmp_path, ("wgmma.m64nNk16.A.f16_bf16",))
    assert [r.kind for r in got] == ["differ"] and "first difference: thread 1 element a0" in got[0].detail


@pytest.mark.slow
def test_installed_mosaic_agrees_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    """Everywhere but the one reviewed difference: its .64x128b.warpx2::01_23 copy (reviewed_more.KNOWN_MORE)."""
    _need()
    rc, out, _ = cli(capsys, "crosscheck", "--reference", "mosaic")
    assert rc == 1 and " 1 differ, 0 malformed" in out
    differing = [line for line in out.splitlines() if "differ" in line and "tcgen05.cp.64x128b.warpx2.01_23" in line]
    assert differing, out[-2000:]


def test_any_text_is_a_layout_or_refused() -> None:
    """The layout reader on hostile text: a value or ``Refused``, never another exception."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="X=TiledLayout(Tiling((,)))warp_dims=-12 8Replicated*/%+.fa\n", max_size=80))
    def run(text: str) -> None:
        r = reader(fa="X = " + text)
        try:
            r.value("fragmented_array", "X")
        except Refused:
            pass
    run()
