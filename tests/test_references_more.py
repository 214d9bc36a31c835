"""The references added for the CTA rasterisations, the tcgen05 descriptor's swizzle codes, B's scale factors in
Tensor Memory and CUTLASS's blockwise scale-factor storage (``rasters``, ``descriptor``, ``mosaic_sfb``,
``cute_sfb``, ``cute_blockwise``) and the reviewed explanations of ``reviewed_more``.

The readers are tested on literal files written here (agreeing, one number changed giving ``differ``, a construct
outside the subset refused at its position, never executed), and each reference on the installed files where its
package is installed (skipped with the reason otherwise).
"""
from __future__ import annotations

import ast
import functools
import textwrap
from pathlib import Path

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import descriptor, matrix, rasters, reference
from verify.checks.references.common import conform_rows
from verify.checks.references.pyfunc import Refused


@functools.cache
def _all() -> tuple:
    sp = tuple(api.load(SPECS))
    return tuple(api.layouts(sp)) + tuple(api.map_layouts(sp))


def _need(name: str) -> None:
    why = reference(name).probe()
    if why:
        pytest.skip(f"reference {name} unavailable: {why}")


SWIZZLE2D = '''\
def swizzle2d(i, j, size_i, size_j, size_g):
    """doc"""
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = core.minimum(size_i - off_i, size_g)
    ij = ij % size_gj
    new_i = off_i + ij % size_g
    new_j = ij // size_g
    return new_i, new_j
'''


def _fn(text: str) -> ast.FunctionDef:
    node = ast.parse(text).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_straight_line_python_is_evaluated_and_the_rest_refused():
    fn = _fn(SWIZZLE2D)
    # the docstring's example: size 4 x 4, groups of 2 rows: (0, 1) -> (0, 2)... row-major 1 is column-major (1, 0)
    assert rasters.run_python(fn, (0, 1, 4, 4, 2), "s.py") == (1, 0)
    assert rasters.run_python(fn, (2, 0, 4, 4, 2), "s.py") == (2, 0)
    with pytest.raises(Refused) as e:
        rasters.run_python(_fn("def f(a):\n    for x in a:\n        pass\n    return a, a\n"), (1,), "s.py")
    assert (e.value.file, e.value.line) == ("s.py", 2)
    with pytest.raises(Refused):
        rasters.run_python(_fn("def f(a):\n    b = open(a)\n    return b, b\n"), (1,), "s.py")
    with pytest.raises(Refused):
        rasters.run_python(_fn("def f(a):\n    return a // 0, a\n"), (1,), "s.py")


def _grouped_rows(text: str) -> list:
    spec = next(x for x in _all() if x.id == "map.raster.triton.grouped")
    fn = _fn(text)
    items = []
    for m in rasters._members(spec):
        rows = tuple((p, *rasters.run_python(fn, (p // m["NN"], p % m["NN"], m["NM"], m["NN"], m["G"]), "s.py"))
                     for p in range(m["NM"] * m["NN"]))
        items.append(rasters.Evaluated("swizzle2d", "", "s.py", 1, spec, tuple(sorted(m.items())), map_rows=rows))
    return conform_rows(items, 30.0)


def test_swizzle2d_is_the_grouped_ordering_and_without_its_minimum_it_differs():
    assert {r.kind for r in _grouped_rows(SWIZZLE2D)} == {"agree"}
    mutated = SWIZZLE2D.replace("    size_g = core.minimum(size_i - off_i, size_g)\n", "")
    kinds = [r.kind for r in _grouped_rows(mutated)]
    assert "differ" in kinds and "agree" in kinds   # wrong only where the last group is short


THREADBLOCK = textwrap.dedent("""\
    struct GemmIdentityThreadblockSwizzle {
      /// Obtains the threadblock offset
      CUTLASS_DEVICE
      static GemmCoord get_tile_offset(int log_tile) {
        int block_idx_x = RematerializeBlockIdxX();
        int block_idx_y = RematerializeBlockIdxY();
        return GemmCoord{(block_idx_x >> log_tile),  //
                         (block_idx_y << log_tile) + ((block_idx_x) & ((1 << (log_tile)) - 1)),
                         block_idx_z};
      }
    };
    """)


def _cutlass(tmp_path: Path, text: str) -> list:
    f = tmp_path / rasters.CUTLASS_FILE
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    return conform_rows(rasters.cutlass_items(_all(), tmp_path), 30.0)


def test_cutlass_identity_swizzle_from_its_header_and_a_changed_shift_differs(tmp_path):
    rows = _cutlass(tmp_path, THREADBLOCK)
    assert rows and {r.kind for r in rows} == {"agree"} and rows[0].line == 7
    rows = _cutlass(tmp_path, THREADBLOCK.replace("(block_idx_x >> log_tile)", "(block_idx_x >> (log_tile + 1))"))
    assert any(r.kind == "differ" for r in rows)
    rows = _cutlass(tmp_path, THREADBLOCK.replace("block_idx_x >> log_tile", "f(block_idx_x)"))
    assert rows and all(r.kind == "malformed" for r in rows)


ENUM = textwrap.dedent("""\
    enum class LayoutType : uint8_t {
      SWIZZLE_NONE = 0,
      SWIZZLE_128B_BASE32B = 1,
      SWIZZLE_128B = 2,
      SWIZZLE_64B = 4,
      SWIZZLE_32B = 6
    };
    """)


def _enum(tmp_path: Path, text: str) -> list:
    f = tmp_path / descriptor.HEADER
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    return conform_rows(descriptor.swizzle_items(_all(), tmp_path), 30.0)


def test_layout_type_enum_is_the_swizzle_codes_and_a_changed_code_differs(tmp_path):
    assert [r.kind for r in _enum(tmp_path, ENUM)] == ["agree"]
    assert [r.kind for r in _enum(tmp_path, ENUM.replace("SWIZZLE_64B = 4", "SWIZZLE_64B = 3"))] == ["differ"]
    rows = _enum(tmp_path, ENUM.replace("  SWIZZLE_32B = 6\n", ""))
    assert [r.kind for r in rows] == ["malformed"] and "SWIZZLE_32B" in rows[0].detail


def test_reviewed_explanations_say_why_and_what_would_settle_it():
    ids = ("map.raster.grouped.full_group", "storage.sf.ue8m0.packed.kmajor", "tcgen05.descriptor.fields",
           "storage.sf.deepgemm.1x128.fp32", "map.raster.triton.grouped")
    lays = [x for x in _all() if x.id in ids]
    m = matrix.build(lays, {})
    assert m.explained("map.raster.grouped.full_group").startswith("not a hardware or library layout")
    assert m.explained("storage.sf.ue8m0.packed.kmajor").startswith("not a hardware or library layout")
    for lid in ("tcgen05.descriptor.fields", "storage.sf.deepgemm.1x128.fp32"):
        assert "what would settle it" in m.explained(lid) and m._explained_kind(lid) == "unreferenced"
    # a single-origin explanation needs its one agreeing reference: with none it explains nothing
    assert m.explained("map.raster.triton.grouped") == ""
    assert all(m.origins(lid) == [] for lid in ids)   # an explanation never counts as an origin


def _rows(name: str, prefix: str) -> list:
    _need(name)
    rep = reference(name).evaluate(list(_all()), 30.0)
    return [r for r in rep.rows if (r.spec or "").startswith(prefix)]


def test_installed_flashinfer_compute_pid_is_the_persistent_ordering():
    rows = _rows("flashinfer", "map.raster")
    if not rows:
        pytest.skip(f"no {rasters.FLASHINFER_FILE} in the installed FlashInfer")
    assert {r.spec for r in rows} == {"map.raster.triton.grouped.persistent"}
    assert {r.kind for r in rows} == {"agree"} and len(rows) == 48


def test_installed_cutlass_headers_state_the_identity_swizzle_and_the_descriptor_codes():
    rows = _rows("cute-text", "map.raster") + _rows("cute-text", "tcgen05.descriptor")
    assert {r.spec for r in rows} == {"map.raster.cutlass.identity", "tcgen05.descriptor.swizzle"}
    assert {r.kind for r in rows} == {"agree"}


def test_installed_mosaic_states_bs_scale_factors():
    rows = _rows("mosaic", "tcgen05.sf.B")
    assert {r.kind for r in rows} == {"agree"}
    assert {dict(r.params)["VS"] for r in rows} == {1, 2, 4} and {dict(r.params)["N"] for r in rows} == {32, 64, 128, 256}


@pytest.mark.slow
def test_installed_triton_swizzle2d_is_the_grouped_ordering():
    rows = _rows("triton", "map.raster")
    assert {r.spec for r in rows} == {"map.raster.triton.grouped"} and {r.kind for r in rows} == {"agree"}


@pytest.mark.slow
@pytest.mark.xdist_group("compiled-cute")
def test_installed_cute_states_sfb_and_the_blockwise_storages():
    rows = _rows("cute", "tcgen05.sf.B") + _rows("cute", "storage.sf.cutlass.blockwise")
    assert {r.spec for r in rows} == {"tcgen05.sf.B.4x1", "storage.sf.cutlass.blockwise.1x128",
                                      "storage.sf.cutlass.blockwise.128x128"}
    assert {r.kind for r in rows} == {"agree"}
