"""Triton's Tensor Memory layouts as a reference (``verify.checks.references.triton``): the data paths A, B,
D, F (``TensorMemoryLayout``, two-CTA with ``two_ctas``), the packings (``col_stride`` over 16- and 8-bit
elements), the scale factors (``TensorMemoryScalesLayout``) and tcgen05.ld/st 16x32bx2 (the atom Triton
infers for a blockM = 64 layout).

The pure parts run on literal Triton bases (what Triton 3.9.0 prints, and planted wrong ones that must be
reported as ``differ``: both engines decide every comparison); the real Triton runs where the triton wheel
is installed (skipped otherwise), on the Tensor Memory specs only.
"""
from __future__ import annotations

import functools

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import reference
from verify.checks.references import triton as triton_ref
from verify.checks.references.common import Evaluated, conform_rows
from verify.layout.notations import NotationError

NEW = {"tcgen05.datapath.A", "tcgen05.datapath.B", "tcgen05.packing.D.b16.unpacked", "tcgen05.packing.A.b16.packed",
       "tcgen05.packing.A.b16.unpacked", "tcgen05.packing.A.mxf8f6f4", "tcgen05.sf.A.4x1",
       "tcgen05.ld.16x32bx2.R.b32", "tcgen05.st.16x32bx2.R.b32"}


@functools.cache
def _all() -> tuple:
    specs = tuple(api.load(SPECS))
    return (*api.layouts(specs), *api.map_layouts(specs))


def _lay(layout_id: str):
    return next(x for x in _all() if x.id == layout_id)


def _need_triton() -> None:
    why = reference("triton").probe()
    if why:
        pytest.skip(f"reference triton unavailable: {why}")


def _identity(bits: int, axis: int, start: int = 0) -> list[list[int]]:
    return [[1 << k, 0] if axis == 0 else [0, 1 << k] for k in range(start, start + bits)]


def _map_row(layout_id: str, doc: dict, req: dict, params: tuple = ()) -> tuple:
    """The crosscheck row of a literal Triton TMEM layout against a map spec (both engines)."""
    lay = _lay(layout_id)
    member = lay.instance(**dict(params)) if params else lay
    rows = triton_ref._tmem_spec_rows(doc, req, tuple((d.name, int(d.size)) for d in member.outputs))
    row = conform_rows([Evaluated("t", "", "triton", 0, lay, params, map_rows=rows)], 10.0)[0]
    return row.kind, row.detail


# ----------------------------------------------------------------------------- which Triton layout for which id

def test_tensor_memory_pairings():
    pairs = triton_ref.requests_for(list(_all()))
    by: dict[str, list] = {}
    for req, lay, params in pairs:
        by.setdefault(lay.id, []).append((req, dict(params)))
    assert NEW <= set(by)
    a = by["tcgen05.datapath.A"]
    assert sorted(p["N"] for _, p in a) == [16, 32, 64, 128, 256]          # powers of two of the multiples of 16
    assert all(r["two_ctas"] and r["cga"] == [[1, 0]] and r["block"][0] == 128 and r["shape"][0] == 256
               for r, _ in a)
    b = by["tcgen05.datapath.B"]
    assert sorted(p["N"] for _, p in b) == [32, 64, 128, 256]
    assert all(r["block"] == [64, p["N"]] and r["shape"] == [128, p["N"]] and r["two_ctas"] for r, p in b)
    (unpacked, _), = by["tcgen05.packing.D.b16.unpacked"]
    assert (unpacked["col_stride"], unpacked["bits"], unpacked["shape"]) == (2, 16, [128, 64])
    (packed, _), = by["tcgen05.packing.A.b16.packed"]
    assert "col_stride" not in packed and packed["bits"] == 16                # col_stride 1: packed
    (f8, _), = by["tcgen05.packing.A.mxf8f6f4"]
    assert (f8["bits"], f8["shape"]) == (8, [128, 128])
    sf = by["tcgen05.sf.A.4x1"]
    assert sorted(p["VS"] for _, p in sf) == [1, 2, 4] and all(r["scales"] and r["quarter"] for r, _ in sf)
    x2 = by["tcgen05.ld.16x32bx2.R.b32"]
    assert sorted(p["NUM"] for _, p in x2) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert all(r["variant"] == "32x32b" and r["block"] == [64, 2 * p["NUM"]] == r["shape"] for r, p in x2)
    # Triton states no layout for these (the module docstring says why)
    for absent in ("tcgen05.datapath.C", "tcgen05.datapath.E", "tcgen05.datapath.E@corrected", "tcgen05.datapath.G",
                   "tcgen05.packing.A.mxf4", "tcgen05.sf.A.4x1.sfa_id0", "tcgen05.cp.32x128b.warpx4",
                   "tcgen05.cp.source.32x128b", "storage.sf.cutlass.128x4", "storage.sf.cutlass.128x4.tile"):
        assert absent not in by, absent
    assert not any(x.startswith("tcgen05.mma.m1n4") for x in by)


def test_local_fields_are_not_sent_to_triton():
    req = {"layout": "tmem", "scales": True, "shape": [128, 4], "bits": 8, "arch": "cuda:100", "quarter": True}
    assert "quarter" not in triton_ref._key(req) and "scales" in triton_ref._key(req)


# ----------------------------------------------------------------------------- literal bases: agree and planted

@pytest.mark.slow
def test_packing_columns_count_elements():
    rows7 = _identity(7, 0)
    unpacked = {"rows": rows7, "cols": [[0, 0], *_identity(6, 1)]}    # TensorMemoryLayout(col_stride=2), Triton 3.9
    packed = {"rows": rows7, "cols": _identity(6, 1)}                  # col_stride=1
    req16u = {"layout": "tmem", "bits": 16, "col_stride": 2}
    req16p = {"layout": "tmem", "bits": 16}
    assert _map_row("tcgen05.packing.D.b16.unpacked", unpacked, req16u)[0] == "agree"
    assert _map_row("tcgen05.packing.A.b16.unpacked", unpacked, req16u)[0] == "agree"
    assert _map_row("tcgen05.packing.A.b16.packed", packed, req16p)[0] == "agree"
    # planted: the unpacked layout given as the packed one is a different placement; the packed one given as
    # the unpacked one puts odd k in the upper half of a word, which the spec's whole-word slot cannot name
    assert _map_row("tcgen05.packing.A.b16.packed", unpacked, req16u)[0] == "differ"
    with pytest.raises(NotationError, match=r"element \(0, 1\) at bit 16 of its word"):
        _map_row("tcgen05.packing.D.b16.unpacked", packed, req16p)
    f8 = {"rows": rows7, "cols": _identity(7, 1)}
    assert _map_row("tcgen05.packing.A.mxf8f6f4", f8, {"layout": "tmem", "bits": 8})[0] == "agree"
    # planted: the four bytes of a word in the opposite order (k = 3 in the lowest byte)
    swapped = {"rows": rows7, "cols": [[0, 2], [0, 1], *_identity(5, 1, 2)]}
    kind, detail = _map_row("tcgen05.packing.A.mxf8f6f4", swapped, {"layout": "tmem", "bits": 8})
    assert kind == "differ" and detail


def test_element_off_its_container_is_an_error():
    doc = {"rows": _identity(7, 0), "cols": [[0, 0], *_identity(6, 1)]}   # a 16-bit element every other column
    with pytest.raises(NotationError, match="bit 16"):                     # ... read as 8-bit: bits 0, 16, ...
        triton_ref._tmem_spec_rows({**doc, "cols": [[0, 0], [0, 1], *_identity(5, 1, 1)]}, {"bits": 8},
                                   (("tmem_lane", 128), ("tmem_col", 32), ("slot", 1)))
    with pytest.raises(NotationError, match="whole words"):
        triton_ref._tmem_spec_rows(doc, {"bits": 8}, (("tmem_lane", 128), ("tmem_col", 64)))


@pytest.mark.slow
def test_two_cta_data_paths():
    n = 64
    a = {"rows": _identity(7, 0), "cols": _identity(6, 1), "block_bases": [[128, 0]]}
    assert _map_row("tcgen05.datapath.A", a, {"layout": "tmem"}, (("N", n),))[0] == "agree"
    b = {"rows": [*_identity(6, 0), [0, n // 2]], "cols": _identity(5, 1), "block_bases": [[64, 0]]}   # Triton 3.9
    assert _map_row("tcgen05.datapath.B", b, {"layout": "tmem"}, (("N", n),))[0] == "agree"
    # planted: the second half of the columns in lanes 64-127 in the wrong order (lane 64 -> N/4, col bit 4 -> N/2)
    wrong = {**b, "rows": [*_identity(6, 0), [0, n // 4]], "cols": [*_identity(4, 1), [0, n // 2]]}
    assert _map_row("tcgen05.datapath.B", wrong, {"layout": "tmem"}, (("N", n),))[0] == "differ"
    # planted: Layout A's CTA split (rows 128-255 in CTA 1) is not Layout B's
    assert _map_row("tcgen05.datapath.B", {**b, "block_bases": [[0, 0]]}, {"layout": "tmem"}, (("N", n),))[0] \
        != "agree"


@pytest.mark.slow
def test_scale_factors_in_every_lane_quarter():
    doc = {"rows": [*_identity(5, 0), [0, 0], [0, 0]], "cols": [[0, 1], [0, 2], [32, 0], [64, 0]]}   # Triton 3.9
    req = {"layout": "tmem", "scales": True, "bits": 8, "quarter": True}
    for vs in (1, 2, 4):
        assert _map_row("tcgen05.sf.A.4x1", doc, req, (("VS", vs),))[0] == "agree"
    # the copy compared is the reader's quarter: the smallest lane (quarter 0) is not where row 32 is read
    assert _map_row("tcgen05.sf.A.4x1", doc, {**req, "quarter": False}, (("VS", 1),))[0] == "differ"
    # planted: the factors of a row in the opposite byte order
    wrong = {**doc, "cols": [[0, 2], [0, 1], [32, 0], [64, 0]]}
    assert _map_row("tcgen05.sf.A.4x1", wrong, req, (("VS", 2),))[0] == "differ"
    # planted: no copies, row m in lane m and the factors in column 0: the reader's column m / 32 is not it
    alone = {"rows": _identity(7, 0), "cols": [[0, 1], [0, 2], [0, 0], [0, 0]]}
    assert _map_row("tcgen05.sf.A.4x1", alone, req, (("VS", 1),))[0] == "differ"


def _x2_entries(tmem_rows: list, tmem_cols: list) -> tuple:
    """Triton 3.9's registers of a 32x32b request over [64, 4] (the 16x32bx2 atom), through a TMEM layout."""
    doc = {"reg_bases": [[0, 1]], "lane_bases": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 2]],
           "warp_bases": [[16, 0], [32, 0]], "tmem_rows": tmem_rows, "tmem_cols": tmem_cols}
    return triton_ref._tmem_entries(doc, "32x32b")


def test_16x32bx2_through_the_blockm_64_layout():
    lay = _lay("tcgen05.ld.16x32bx2.R.b32")
    own = _x2_entries([[1, 0], [2, 0], [4, 0], [8, 0], [0, 0], [16, 0], [32, 0]], [[0, 1], [0, 2]])   # block (64, 4)
    assert (16, 0, 0, 2) in own                       # lane 16 reads TMEM lane 0 at column .num = 2
    row = conform_rows([Evaluated("t", "R", "triton", 0, lay, (("NUM", 2),), own)], 10.0)[0]
    assert row.kind == "agree", row.detail
    # planted: block (64, 2) over [64, 4] keeps columns 2-3 in TMEM lanes 16-31: that is a 32x32b access
    split = _x2_entries([[1, 0], [2, 0], [4, 0], [8, 0], [0, 2], [16, 0], [32, 0]], [[0, 1]])
    row = conform_rows([Evaluated("t", "R", "triton", 0, lay, (("NUM", 2),), split)], 10.0)[0]
    assert row.kind == "differ" and row.counterexample is not None
    with pytest.raises(NotationError, match="no Tensor Memory address"):
        _x2_entries([[1, 0], [2, 0], [4, 0], [8, 0], [0, 0], [16, 0], [32, 0]], [[0, 1]])


# ----------------------------------------------------------------------------- the installed Triton

@functools.cache
def _report():
    tmem = [x for x in _all() if x.id.startswith(("tcgen05.datapath", "tcgen05.packing", "tcgen05.sf",
                                                   "tcgen05.ld.16x32bx2", "tcgen05.st.16x32bx2"))]
    return triton_ref.evaluate_default(tmem, 30.0)


@pytest.mark.slow
def test_triton_states_the_tensor_memory_layouts():
    _need_triton()
    rep = _report()
    assert {r.kind for r in rep.rows} == {"agree"}, [(r.spec, r.params, r.detail) for r in rep.rows if r.kind != "agree"]
    got: dict[str, set] = {}
    for r in rep.rows:
        got.setdefault(r.spec, set()).add(r.params)
    assert set(got) == NEW | {"tcgen05.datapath.D", "tcgen05.datapath.F"}
    assert got["tcgen05.datapath.B"] == {(("N", n),) for n in (32, 64, 128, 256)}
    assert got["tcgen05.sf.A.4x1"] == {(("VS", v),) for v in (1, 2, 4)}
    assert len(got["tcgen05.st.16x32bx2.R.b32"]) == 8
    tm = next(r for r in rep.rows if r.spec == "tcgen05.datapath.A")
    assert tm.header.endswith("triton/experimental/gluon/language/nvidia/blackwell/__init__.py")
    import triton.experimental.gluon.language.nvidia.blackwell as bw
    src = open(bw.__file__, encoding="utf-8").read().splitlines()
    assert src[tm.line - 1].startswith("class TensorMemoryLayout")
    sf = next(r for r in rep.rows if r.spec == "tcgen05.sf.A.4x1")
    assert src[sf.line - 1].startswith("class TensorMemoryScalesLayout")


@pytest.mark.slow
def test_triton_planted_layouts_are_differ_rows():
    """The real Triton layouts paired with the wrong spec: a placement Triton states differently is a finding."""
    _need_triton()
    reqs = {"unpacked": {"layout": "tmem", "block": [128, 64], "shape": [128, 64], "bits": 16, "col_stride": 2,
                         "arch": "cuda:100"},
            "split": {"layout": "tmem_reg", "variant": "32x32b", "num_warps": 4, "shape": [64, 4], "block": [64, 2]},
            "one_cta": {"layout": "tmem", "block": [64, 64], "shape": [64, 64], "arch": "cuda:100"}}
    _, found = triton_ref.run_dump([{**r, "key": k} for k, r in reqs.items()])
    unpacked = triton_ref._tmem_spec_rows(found["unpacked"], reqs["unpacked"],
                                          (("tmem_lane", 128), ("tmem_col", 32), ("slot", 2)))
    packed = _lay("tcgen05.packing.A.b16.packed")   # what the MMA reads for A is not Triton's col_stride=2
    split = _lay("tcgen05.ld.16x32bx2.R.b32")
    e = _lay("tcgen05.datapath.E@corrected")   # .ws M = 64 (2x2) is not Triton's one-CTA blockM = 64 (F's)
    rows = conform_rows([
        Evaluated("unpacked", "", "t", 0, packed, (), map_rows=unpacked),
        Evaluated("split", "R", "t", 0, split, (("NUM", 2),), triton_ref._tmem_entries(found["split"], "32x32b")),
        Evaluated("one_cta", "", "t", 0, e, (("N", 64),),
                  map_rows=triton_ref._tmem_spec_rows(found["one_cta"], reqs["one_cta"],
                                                      (("tmem_lane", 128), ("tmem_col", 32)))),
    ], 30.0)
    assert [r.kind for r in rows] == ["differ"] * 3, [r.detail for r in rows]
    assert rows[2].detail.startswith("at row 0, col 32:")     # Triton: lane 0, column 32; .ws: lane 64, column 0
