"""From shared memory to registers: "this layout + these lane addresses + ldmatrix.x4 gives mma A" as one
equality of maps, and a writer against a reader with the first cell they disagree on."""
from __future__ import annotations

import pytest

from verify import api
from verify.checks.smem_load import ldmatrix_fragment, ldmatrix_is, writer_reader
from verify.layout.named import evaluate_all
from verify.layout.smem_access import default_pattern, parse_access, pattern_from_text


@pytest.fixture(scope="module")
def specs():
    return api.load("specs")


def _x4(specs):
    return api.layout(specs, "ldmatrix.m8n8.R.b16").instance(NUM=4)


@pytest.mark.parametrize("tile", [
    "(16,16):(16,1)",                                                          # row-major
    "(16,16):(24,1)",                                                          # padded rows (48 bytes)
    "tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>{}, Shape<_16,_16>{})",     # swizzled
    "Sw<3,4,3> o smem_ptr[16b](unset) o (16,64):(64,1)",                       # a 128-byte swizzled row
])
def test_ldmatrix_x4_gives_mma_a(specs, tile: str) -> None:
    lay = api.shared_layout("cute", tile, type="f16")
    r = ldmatrix_is(lay, _x4(specs), default_pattern(parse_access("ldmatrix.x4"), 16),
                    api.layout(specs, "mma.m16n8k16.A.f16_bf16"))
    assert r.status == "proved" and r.engines == {"z3": "proved", "enumeration": "proved"}


def test_a_column_major_tile_is_not_mma_a(specs) -> None:
    lay = api.shared_layout("cute", "(16,16):(1,16)", type="f16")
    r = ldmatrix_is(lay, _x4(specs), default_pattern(parse_access("ldmatrix.x4"), 16),
                    api.layout(specs, "mma.m16n8k16.A.f16_bf16"))
    assert r.status == "refuted" and r.counterexample["point"] == {"lane": 0, "i": 1}
    assert r.counterexample["ldmatrix"] == {"row": 1, "col": 0}  # the next element of the 16-byte row is row 1


def test_trans_gives_mma_b(specs) -> None:
    """ldmatrix.x2.trans of a row-major 16 x 8 tile of B (K x N): lane t < 16 addresses row t."""
    x2t = api.layout(specs, "ldmatrix.m8n8.R.b16.trans").instance(NUM=2)
    lay = api.shared_layout("cute", "(16,8):(8,1)", type="f16")
    pat = pattern_from_text("row = %laneid % 16\ncol = 0", parse_access("ldmatrix.x2.trans"), 16)
    r = ldmatrix_is(lay, x2t, pat, api.layout(specs, "mma.m16n8k16.B.f16_bf16"))
    assert r.status == "proved"


def test_misaligned_rows_show_as_a_difference(specs) -> None:
    lay = api.shared_layout("cute", "(16,20):(20,1)", type="f16")  # 40-byte rows: row 1 starts mid-chunk
    pat = default_pattern(parse_access("ldmatrix.x4"), 16)
    given = ldmatrix_fragment(lay, _x4(specs), pat)
    v = evaluate_all(given)
    assert v.ok[0, 0] and not v.ok[4, 0]  # lane 4 reads row 1, whose start 40 is not a whole 16-byte row
    r = ldmatrix_is(lay, _x4(specs), pat, api.layout(specs, "mma.m16n8k16.A.f16_bf16"))
    assert r.status == "refuted" and r.counterexample["point"] == {"lane": 4, "i": 0}


def test_writer_against_reader() -> None:
    w = api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64,_64>{})")
    same = api.shared_layout("tma", "64x64:128B", type="f16")
    assert writer_reader(w, same).status == "proved"
    other = api.shared_layout("triton", "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, "
                              "elementBitWidth = 16}>", tile=(64, 64))
    r = writer_reader(w, other)
    assert r.status == "refuted" and r.counterexample["point"] == {"row": 0, "col": 32}
    with pytest.raises(ValueError, match="16-bit elements, the reader reads 8-bit"):
        writer_reader(w, api.shared_layout("cute", "(64,64):(64,1)", type="e4m3"))


def test_the_other_ldmatrix_shapes_compose(specs) -> None:
    """.m16n16 (8-bit, 16 row addresses per matrix) and .m8n16 (padded 6-bit rows): the composition reads
    every cell of the tile once."""
    from verify.checks import maps
    m16 = api.layout(specs, "ldmatrix.m16n16.R.b8_b8x16.trans").instance(NUM=2)
    lay = api.shared_layout("cute", "(16,32):(32,1)", type="e4m3")
    got = ldmatrix_fragment(lay, m16, default_pattern(parse_access("ldmatrix.m16n16.x2.trans.b8"), 8))
    assert [c.status for c in maps.bijective(got)][:2] == ["proved", "proved"]
    m8n16 = next(x for x in api.layouts(specs) if x.id.startswith("ldmatrix.m8n16")).instance(NUM=4)
    lay = api.shared_layout("cute", "(16,32):(32,1)", type="e4m3")
    got = ldmatrix_fragment(lay, m8n16, default_pattern(parse_access("ldmatrix.m8n16.x4.b8x16.b6x16_p32"), 8))
    assert maps.injective(got).status == "proved"


def test_stmatrix_writes_through_the_layout(specs) -> None:
    """stmatrix.x4 read backwards: element i of lane t lands at one tile cell, the same cell whatever layout
    the rows have (row-major or swizzled: the addresses follow the layout), and every cell exactly once."""
    from verify.checks import maps
    stm = api.layout(specs, "stmatrix.m8n8.R.b16").instance(NUM=4)
    pat = default_pattern(parse_access("stmatrix.x4"), 16)
    plain = ldmatrix_fragment(api.shared_layout("cute", "(16,16):(16,1)", type="f16"), stm, pat)
    swz = ldmatrix_fragment(api.shared_layout("cute", "tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>{}, "
                                                      "Shape<_16,_16>{})"), stm, pat)
    assert maps.same(plain, swz).status == "proved"
    assert [c.status for c in maps.bijective(plain)] == ["proved"] * 3
