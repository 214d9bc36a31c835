"""Shared-memory layouts: swizzles on the right bits, the notations (CuTe, Triton, index code, TMA boxes) as
maps, equal where the libraries say they are equal, and every bad input a positioned one-line error."""
from __future__ import annotations

import pytest

from verify import api
from verify.checks import maps
from verify.layout.notations.cute_shared import import_cute_shared, parse_cute_shared
from verify.layout.notations.errors import NotationError
from verify.layout.shared import Swizzle, canonical, element_bits, mode, tma_layout

K128 = "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64,_64>{})"


def test_swizzle_is_cutes() -> None:
    s = Swizzle(3, 4, 3)  # bits 7-9 XORed into bits 4-6
    assert [s.apply(x) for x in (0, 16, 128, 128 + 16, 1024 + 128)] == [0, 16, 144, 128, 1024 + 144]
    assert s.period == 1024 and Swizzle(1, 4, 3).period == 256 and Swizzle(2, 5, 2).period == 512
    assert all(s.apply(s.apply(x)) == x for x in range(4096))  # an involution: the inverse is itself
    with pytest.raises(ValueError, match="S must be at least B"):
        Swizzle(3, 4, 2)
    assert mode("SW128").swizzle == s and mode("interleave").name == "none" and element_bits("bf16") == 16


def test_address_swizzle_differs_from_an_element_swizzle() -> None:
    """CuTe applies Swizzle<3,4,3> to the smem pointer (bytes); a plain composition applies it to element
    offsets: for half_t they are two different layouts, first apart at (1, 0)."""
    ptr = import_cute_shared("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)")
    elem = import_cute_shared("composition(Swizzle<3,4,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})", 16)
    assert ptr.swizzle_on == "address" and elem.swizzle_on == "elements"
    assert (ptr.offset(1, 0), elem.offset(1, 0)) == (72, 64)
    r = maps.same(ptr.map, elem.map)
    assert r.status == "refuted" and r.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert r.counterexample["point"] == {"row": 1, "col": 0}


@pytest.mark.parametrize("text", [
    "GMMA::Layout_K_SW128_Atom<half_t>",
    "cute::GMMA::Layout_K_SW128_Atom<cutlass::half_t>",
    "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)",
    "ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag_bits<16>, Layout<Shape<_8,_64>,Stride<_64,_1>>>",
    "Swizzle<3,4,3> o (8,64):(64,1)",
])
def test_the_forms_of_one_atom_are_one_map(text: str) -> None:
    ref = canonical("K", "128B", 16, m=1, k=4)  # the wgmma page's canonical layout, 8 rows x 64 halves
    got = import_cute_shared(text, 16)
    assert (got.rows, got.cols) == (8, 64)
    assert maps.same(got.map, ref.map).status == "proved"


def test_tile_to_shape_is_cutes_blocked_product() -> None:
    """CuTe 4.2 on the host (tests/test_shared_cute.py runs it): tile_to_shape(K_SW128 half_t, 64x64) puts
    (r, 8 c) at these element offsets; MN_SW64 at the second list."""
    lay = import_cute_shared(K128)
    assert [lay.offset(r, 8 * c) for r in range(3) for c in range(3)] == [0, 8, 16, 72, 64, 88, 144, 152, 128]
    mn = import_cute_shared("tile_to_shape(GMMA::Layout_MN_SW64_Atom<half_t>{}, Shape<_64,_64>{})")
    assert [mn.offset(r, 8 * c) for r in range(3) for c in range(3)] == [0, 512, 1024, 1, 513, 1025, 2, 514, 1026]
    rowmajor = import_cute_shared("tile_to_shape(GMMA::Layout_MN_SW128_Atom<half_t>{}, Shape<_128,_16>{}, Step<_2,_1>{})")
    assert (rowmajor.offset(0, 8), rowmajor.offset(64, 0)) == (512, 1024)  # Step<_2,_1>: atoms along K first


def test_triton_nvmma_is_the_cute_tile_at_an_aligned_base() -> None:
    for width, atom in ((128, "SW128"), (64, "SW64"), (32, "SW32")):
        tri = api.shared_layout("triton", "#shared = #ttg.nvmma_shared<{swizzlingByteWidth = %d, transposed = false, "
                                "elementBitWidth = 16}>\n%%a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, "
                                "#smem, mutable>" % width)
        cute = import_cute_shared(f"tile_to_shape(GMMA::Layout_K_{atom}_Atom<half_t>{{}}, Shape<_64,_64>{{}})")
        assert maps.same(tri.map, cute.map).status == "proved", width
        assert tri.swizzle_on == "bytes"
    # transposed (M/N contiguous): one 128-byte atom along M/N is the same tile
    tri = api.shared_layout("triton", "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, "
                            "elementBitWidth = 16}>", tile=(64, 64))
    cute = import_cute_shared("tile_to_shape(GMMA::Layout_MN_SW128_Atom<half_t>{}, Shape<_64,_64>{})")
    assert maps.same(tri.map, cute.map).status == "proved"


def test_triton_swizzled_and_linear_shared() -> None:
    sw = api.shared_layout("triton", "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
                           tile=(64, 64), type="f16")
    assert maps.same(sw.map, import_cute_shared(K128).map).status == "proved"
    lin = api.shared_layout("triton", "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 3]]}>", tile=(4, 4),
                            type="f32")
    # offset 8 = bit 3 -> (2, 3); offset 12 = bits 2, 3 -> (1, 0) ^ (2, 3) = (3, 3)
    assert lin.offset(2, 3) == 8 and lin.offset(3, 3) == 12
    assert [c.status for c in maps.bijective(lin.map)] == ["proved"] * 3


def test_index_code_in_bytes() -> None:
    code = "off = row * 128 + col * 2\nswz = off ^ (((off >> 7) & 7) << 4)\n"
    idx = api.shared_layout("index", code, tile=(64, 64), type="f16")
    assert maps.same(idx.map, import_cute_shared(K128).map).status == "proved"
    odd = api.shared_layout("index", "off = row * 130 + col * 2 + 1", tile=(2, 2), type="f16")
    assert odd.offset(0, 0) is None  # byte 1 is not a whole 16-bit element


def test_tma_box() -> None:
    tma = tma_layout(64, 64, 16, "128B")
    assert maps.same(tma.map, import_cute_shared(K128).map).status == "proved"
    with pytest.raises(ValueError, match="wider than the 64-byte span"):
        tma_layout(64, 64, 16, "64B")
    with pytest.raises(ValueError, match="multiple of 16"):
        tma_layout(8, 4, 16, "none")


@pytest.mark.parametrize("text,where,message", [
    ("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1", (1, 52), "expected ',' or ')'"),
    ("GMMA::Layout_K_SW99_Atom<half_t>", (1, 1), "unknown type"),
    ("GMMA::Layout_K_SW128_Atom<floaty>", (1, 27), "unknown element type 'floaty'"),
    ("tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_60,_64>{})", (1, 1), "not a multiple of the atom's 8"),
    ("Sw<3,4,2> o (8,64):(64,1)", (1, 1), "S must be at least B"),
    ("GMMA::Layout_K_SW128_32B_Atom<float>", (1, 1), "does not exist"),
    ("composition(Swizzle<3,4,3>{})", (1, 1), "composition(Swizzle<B,M,S>{}, Layout<...>{})"),
    ("(8,64,2):(64,1,512)", (1, 1), "two modes"),
])
def test_bad_cute_text_is_positioned(text: str, where: tuple[int, int], message: str) -> None:
    with pytest.raises(NotationError) as e:
        import_cute_shared(text, 16)
    assert (e.value.line, e.value.col) == where and message in e.value.message


@pytest.mark.parametrize("text,message", [
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 96, elementBitWidth = 16}>", "32, 64 or 128"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, elementBitWidth = 16, fp4Padded = true}>", "fp4Padded"),
    ("#ttg.swizzled_shared<{vec = 3, perPhase = 1, maxPhase = 8, order = [1, 0]}>", "power of two"),
    ("#ttg.shared_linear<{offset = [[0, 1], [0, 1], [1, 0], [2, 0]]}>", "not linearly independent"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, swizzlingByteWidth = 64}>", "given twice"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128", "unterminated"),
    ("nothing here", "no Triton shared encoding"),
])
def test_bad_triton_text_is_an_error(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        api.shared_layout("triton", text, tile=(4, 64) if "shared_linear" not in text else (4, 4), type="f16")


def test_parse_keeps_what_cute_says_about_pointers() -> None:
    assert parse_cute_shared("Sw<2,4,3> o smem_ptr[8b](unset) o (8,64):(64,1)").bits == 8
    assert parse_cute_shared("Sw<2,4,3> o _0 o (8,64):(64,1)").on == "elements"
    assert parse_cute_shared("(8,64):(64,1)").swizzle is None
